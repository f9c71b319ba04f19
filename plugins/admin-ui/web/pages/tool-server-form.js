// Registering a workspace tool server: the transport first, then the fields of that kind of
// server (a command line run in the sandbox, or a remote URL with its authentication).
import { api, ApiError } from '../api.js';
import { html, useForm, Form, Field } from '../ui.js';

const transports = [
  ['streamable-http', 'Streamable HTTP (current MCP servers)'],
  ['sse', 'HTTP+SSE (older MCP servers)'],
  ['stdio', 'Command line (run in the sandbox)'],
];
const auths = [['none', 'None'], ['bearer', 'Bearer token'], ['oauth', 'OAuth sign-in']];

const blank = {
  transport: 'streamable-http', name: '', url: '', auth: 'none', bearer_token: '', oauth_client_id: '', oauth_client_secret: '', oauth_scope: '',
  command: '', args: '', env: '', secret_env: '',
};

/** Non-empty lines of a text area, as typed (an argument may hold spaces or start with them). */
const lines = (text) => text.split(/\r?\n/).filter((l) => l.trim() !== '');

/** `NAME=value` lines as an object; a line without `=` is refused at its field, as the API would refuse a bad name. */
function envOf(text, field) {
  const out = {};
  for (const line of lines(text)) {
    const at = line.indexOf('=');
    if (at <= 0) throw new ApiError(400, { error: { message: `Each line is NAME=value ("${line.slice(0, 40)}" has no name or no =).`, param: field } });
    out[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return out;
}

/** The request body of a registration: only the fields of the chosen kind, only those filled in. */
function bodyOf(v) {
  const body = { name: v.name, transport: v.transport };
  if (v.transport === 'stdio') {
    body.command = v.command.trim();
    const args = lines(v.args);
    if (args.length) body.args = args;
    const env = envOf(v.env, 'env');
    if (Object.keys(env).length) body.env = env;
    const secrets = envOf(v.secret_env, 'secret_env');
    if (Object.keys(secrets).length) body.secret_env = secrets;
    return body;
  }
  body.url = v.url;
  body.auth = v.auth;
  if (v.auth === 'bearer') body.bearer_token = v.bearer_token;
  if (v.auth === 'oauth') for (const f of ['oauth_client_id', 'oauth_client_secret', 'oauth_scope']) if (v[f]) body[f] = v[f];
  return body;
}

const StdioFields = ({ form }) => html`
  <${Field} form=${form} name="command" label="Command" required autocomplete="off" spellcheck="false"
    hint="A program name the sandbox allows (its operator lists them, e.g. node or npx), never a path or a command line." />
  <${Field} form=${form} name="args" label="Arguments (one per line)" type="textarea" spellcheck="false"
    hint="Each line is passed to the program as one argument, as is: no shell, nothing is expanded. E.g. -y, then @scope/server." />
  <${Field} form=${form} name="env" label="Environment (NAME=value per line)" type="textarea" spellcheck="false"
    hint="Shown to this workspace's admins." />
  <${Field} form=${form} name="secret_env" label="Secret environment (NAME=value per line)" type="textarea" spellcheck="false" autocomplete="off"
    hint="API keys and the like: stored encrypted and never shown again (only their names are)." />
  <p class="hint">The server runs in the sandbox for each listing and each call, and reaches only the hosts on the instance's egress
    allow-list.</p>`;

const RemoteFields = ({ form }) => html`
  <${Field} form=${form} name="url" label="Server URL" type="url" hint="The MCP endpoint, e.g. https://tools.example.com/mcp" required />
  <${Field} form=${form} name="auth" label="Authentication" type="select" options=${auths} />
  ${form.values.auth === 'bearer' && html`<${Field} form=${form} name="bearer_token" label="Bearer token" type="password" autocomplete="off" required
    hint="Sent as Authorization: Bearer. Stored encrypted and never shown again." />`}
  ${form.values.auth === 'oauth' && html`
    <p class="hint">After registering, an admin of this workspace signs in to the server (Sign in, in the list above); svc keeps and
      refreshes the tokens. The server's and its authorization server's origins must be allowed.</p>
    <${Field} form=${form} name="oauth_client_id" label="OAuth client id (optional)" autocomplete="off"
      hint="One the authorization server issued to svc; without it svc registers itself where the server allows that." />
    <${Field} form=${form} name="oauth_client_secret" label="OAuth client secret (optional)" type="password" autocomplete="off"
      hint="Goes with the client id. Stored encrypted and never shown again." />
    <${Field} form=${form} name="oauth_scope" label="OAuth scope (optional)" hint="Else the scope the server asks for." />`}`;

export function ServerForm({ base, done }) {
  const form = useForm(blank);
  return html`<${Form} form=${form} title="Register a tool server" submitLabel="Register server" onSubmit=${async (v) => {
    const server = await api('POST', base, bodyOf(v));
    form.reset();
    done(server);
  }}>
    <${Field} form=${form} name="transport" label="Transport" type="select" options=${transports} />
    <${Field} form=${form} name="name" label="Server name" hint="Letters, digits, _ and -, up to 40. The model sees its tools as <name>__<tool>." required maxlength="40" />
    ${form.values.transport === 'stdio' ? html`<${StdioFields} form=${form} />` : html`<${RemoteFields} form=${form} />`}
  </${Form}>`;
}
