// The floor for the token endpoint: how many RS256 id_tokens one Node thread signs per second.
import jwt from 'jsonwebtoken';
import { generateKeyPairSync } from 'node:crypto';

const seconds = Number(process.argv[2] ?? 5);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const claims = { iss: 'http://localhost:3000', sub: '00000000-0000-0000-0000-000000000001', aud: 'client', auth_time: 0, nonce: 'n' };
const deadline = Date.now() + seconds * 1000;
let count = 0;
while (Date.now() < deadline) {
  jwt.sign({ ...claims, iat: Math.floor(Date.now() / 1000) }, privateKey, { algorithm: 'RS256', keyid: 'k', expiresIn: 3600 });
  count++;
}
console.log(JSON.stringify({ signaturesPerSecond: Math.round(count / seconds) }));
