// The floor for the token endpoint: how many RS256 id_tokens one Node thread signs per second, and the CPU
// time one signature takes (what an exchange with `openid` cannot do without).
import jwt from 'jsonwebtoken';
import { generateKeyPairSync } from 'node:crypto';

const seconds = Number(process.argv[2] ?? 5);
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
// The claims of the benchmark's id_tokens (scopes openid and profile).
const claims = {
  iss: 'http://localhost:3000',
  sub: '00000000-0000-0000-0000-000000000001',
  aud: 'client',
  auth_time: 0,
  amr: ['pwd'],
  acr: 'urn:agora:password',
  nonce: 'n',
  name: 'Bench User',
  preferred_username: 'bench',
};
const cpuBefore = process.cpuUsage();
const deadline = Date.now() + seconds * 1000;
let count = 0;
while (Date.now() < deadline) {
  jwt.sign({ ...claims, iat: Math.floor(Date.now() / 1000) }, privateKey, { algorithm: 'RS256', keyid: 'k', expiresIn: 3600 });
  count++;
}
const cpu = process.cpuUsage(cpuBefore);
console.log(
  JSON.stringify({ signaturesPerSecond: Math.round(count / seconds), cpuUsPerSignature: Math.round((cpu.user + cpu.system) / count) }),
);
