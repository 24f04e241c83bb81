import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret, Signer } from './signing';

// The example of the Standard Webhooks specification: what any receiver's library computes.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const MESSAGE_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const SENT_AT = new Date(1_614_265_330_000);
const BODY = '{"test": 2432232314}';
const SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

describe(Signer.name, () => {
  let sut: Signer;
  beforeEach(() => {
    sut = new Signer();
  });

  it("signs the specification's example as the specification does", () => {
    expect(sut.sign([SECRET], MESSAGE_ID, SENT_AT, BODY)).toBe(SIGNATURE);
    const headers = {
      'webhook-id': MESSAGE_ID,
      'webhook-timestamp': '1614265330',
      'webhook-signature': SIGNATURE,
    };
    const library = new Webhook(SECRET);
    // The library checks the timestamp against its clock; the signature is what is compared.
    jest.useFakeTimers({ now: SENT_AT });
    try {
      expect(library.verify(BODY, headers)).toEqual({ test: 2432232314 });
    } finally {
      jest.useRealTimers();
    }
  });

  it('signs the whole second the message was sent in', () => {
    const later = new Date(SENT_AT.getTime() + 999);
    expect(sut.sign([SECRET], MESSAGE_ID, later, BODY)).toBe(SIGNATURE);
  });

  it('signs with every live secret, space-separated, in the order given (a rotation)', () => {
    const other = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    const second = sut.sign([other], MESSAGE_ID, SENT_AT, BODY);
    // As the reference library signs it with that secret.
    expect(second).toBe('v1,n+3FEHUk3SEPes8OkJLzz5oNeY7dNUg973c0p9vd8Jo=');
    expect(sut.sign([SECRET, other], MESSAGE_ID, SENT_AT, BODY)).toBe(`${SIGNATURE} ${second}`);
  });

  it('takes a secret with or without its whsec_ prefix', () => {
    expect(sut.sign([SECRET.slice('whsec_'.length)], MESSAGE_ID, SENT_AT, BODY)).toBe(SIGNATURE);
  });

  it("imports each secret's key once, keeping at most 1000, and signs the same from the cache", () => {
    const imports = jest.spyOn(crypto, 'createSecretKey');
    try {
      const others = Array.from(
        { length: 1000 },
        (_, i) => `whsec_${Buffer.from(`secret ${i}`).toString('base64')}`,
      );
      expect(sut.sign([SECRET], MESSAGE_ID, SENT_AT, BODY)).toBe(SIGNATURE);
      expect(sut.sign([SECRET], MESSAGE_ID, SENT_AT, BODY)).toBe(SIGNATURE);
      expect(imports).toHaveBeenCalledTimes(1);
      // 999 more fill the cache to 1000; the first is still in it.
      for (const secret of others.slice(0, 999)) sut.sign([secret], 'msg_x', SENT_AT, '{}');
      expect(sut.sign([SECRET], MESSAGE_ID, SENT_AT, BODY)).toBe(SIGNATURE);
      expect(imports).toHaveBeenCalledTimes(1000);
      // The 1001st secret empties the cache, so the first is imported again.
      sut.sign([others[999]!], 'msg_x', SENT_AT, '{}');
      expect(sut.sign([SECRET], MESSAGE_ID, SENT_AT, BODY)).toBe(SIGNATURE);
      expect(imports).toHaveBeenCalledTimes(1002);
    } finally {
      imports.mockRestore();
    }
  });

  it('refuses an empty secret', () => {
    expect(() => sut.sign(['whsec_'], MESSAGE_ID, SENT_AT, BODY)).toThrow("Secret can't be empty.");
  });
});

describe(newSigningSecret.name, () => {
  it('is whsec_ and the base64 of 32 random bytes, new each time', () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(secret);
  });
});
