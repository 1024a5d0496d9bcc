/** Plain HTTP helpers for black-box tests: exact statuses, headers and bodies. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown>;
}

async function reply(response: Response): Promise<Reply> {
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    json = {};
  }
  return { status: response.status, headers: response.headers, text, json };
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** POST an application/x-www-form-urlencoded body (a string is sent as it is). */
export async function postForm(url: string, body: Record<string, string> | string, headers: Record<string, string> = {}): Promise<Reply> {
  const encoded = typeof body === 'string' ? body : new URLSearchParams(body).toString();
  return reply(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: encoded,
    }),
  );
}

export async function request(url: string, init: RequestInit = {}): Promise<Reply> {
  return reply(await fetch(url, init));
}
