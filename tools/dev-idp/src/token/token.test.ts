import { errorBody, requestJson, useRunning, validationErrorAt } from '@platform/shared/testing';
import { startDevIdp } from '../test/start-dev-idp';
import { subjectForEmail } from '../tokens';

describe('POST /token', () => {
  const idp = useRunning(startDevIdp);

  const postToken = (body: unknown, headers?: Record<string, string>) =>
    requestJson(`${idp().url}/token`, { method: 'POST', body, headers });
  const claimsOf = (credential: string) =>
    JSON.parse(Buffer.from(credential.split('.')[1]!, 'base64url').toString('utf8'));

  it('returns only a credential for the given e-mail and name, for the configured audience', async () => {
    const response = await postToken({ email: ' Alan@Example.com ', name: ' Alan Turing ' });

    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['credential']);
    expect(claimsOf(response.body.credential)).toMatchObject({
      aud: idp().clientId,
      email: 'alan@example.com',
      name: 'Alan Turing',
      sub: subjectForEmail('alan@example.com'),
    });
  });

  it.each([
    ['an invalid e-mail', { email: 'not-an-email', name: 'A' }, 'email'],
    ['a missing name', { email: 'a@example.com' }, 'name'],
    ['an empty name', { email: 'a@example.com', name: '  ' }, 'name'],
    ['an unknown field', { email: 'a@example.com', name: 'A', sub: '1' }, 'sub'],
    ['a non-string e-mail', { email: { $ne: '' }, name: 'A' }, 'email'],
  ])('refuses %s with 400 VALIDATION_ERROR', async (_case, body, path) => {
    const response = await postToken(body);

    expect(response.status).toBe(400);
    expect(response.body).toEqual(validationErrorAt(path));
  });

  it.each([
    [
      'a body that is not JSON',
      'email=a@example.com&name=A',
      { 'content-type': 'application/x-www-form-urlencoded' },
    ],
    ['malformed JSON', '{"email":', undefined],
  ])('refuses %s with 400 INVALID_REQUEST', async (_case, body, headers) => {
    const response = await postToken(body, headers);

    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody('INVALID_REQUEST'));
  });
});
