// One chat completion, then a stream, through svc with the official `openai` package (npm i openai).
// Run: SVC_API_KEY=svc_… node openai-node.mjs
import OpenAI from 'openai';

const client = new OpenAI({
  baseURL: process.env.SVC_BASE_URL ?? 'http://localhost:8080/v1',
  apiKey: process.env.SVC_API_KEY, // an svc_ key, never a provider's key
});

const reply = await client.chat.completions.create({
  model: 'auto', // or `route/<name>`, or `<provider>:<model>`
  messages: [{ role: 'user', content: 'Say hello in one word.' }],
});
console.log(reply.choices[0].message.content);

const stream = await client.chat.completions.create({
  model: 'auto',
  stream: true,
  messages: [{ role: 'user', content: 'Count to three.' }],
});
for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
process.stdout.write('\n');
