// The API explorer: sends the query to /graphql with the personal token typed in (never stored).
const form = document.getElementById('explorer');
const output = document.getElementById('result');
const status = document.getElementById('status');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = document.getElementById('token').value.trim();
  const query = document.getElementById('query').value;
  const variablesText = document.getElementById('variables').value.trim();
  let variables;
  try {
    variables = variablesText ? JSON.parse(variablesText) : undefined;
  } catch {
    status.textContent = 'Variables must be a JSON object.';
    return;
  }
  status.textContent = 'Running…';
  const headers = { 'content-type': 'application/json' };
  if (token) headers['private-token'] = token;
  const res = await fetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const text = await res.text();
  status.textContent = `HTTP ${res.status}`;
  try {
    output.textContent = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    output.textContent = text;
  }
});
