import OpenAI from 'openai';
import { MockUpstream } from '../support/mock-upstream.js';
import { startWorld, type World } from '../support/provision.js';

/** The model most chat tests call: its id keeps colons and slashes, as providers give them. */
export const modelName = 'local:meta-llama/Llama-3.1-8B:instruct';
export const upstreamId = 'meta-llama/Llama-3.1-8B:instruct';

export interface ChatWorld extends World {
  mock: MockUpstream;
  client: OpenAI;
}

/** A world with a mock provider named `local` and one priced model on it, plus an SDK client. */
export async function startChatWorld(overrides: Record<string, unknown> = {}, modelFields: Record<string, unknown> = {}): Promise<ChatWorld> {
  const mock = await new MockUpstream({ apiKey: 'sk-upstream-canary-7f3a' }).start();
  let world: World;
  try {
    world = await startWorld(overrides);
  } catch (err) {
    await mock.stop(); // a world that failed to start must not leave the mock holding the process open
    throw err;
  }
  await world.admin.provider('local', mock.url, 'sk-upstream-canary-7f3a');
  await world.admin.model(modelName, modelFields);
  const client = new OpenAI({ baseURL: `${world.svc.url}/v1`, apiKey: world.apiKey, maxRetries: 0 });
  return {
    ...world,
    mock,
    client,
    stop: async () => {
      await world.stop();
      await mock.stop();
    },
  };
}

/** Posts a raw body (for shapes the SDK would refuse to send). */
export async function rawPost(w: World, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${w.svc.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${w.apiKey}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
