import { withoutAddresses } from './mail-outbox';

describe('withoutAddresses', () => {
  it('masks every address an SMTP answer quotes, and nothing else', () => {
    expect(
      withoutAddresses(
        "Can't send mail - all recipients were rejected: 550 5.1.1 <ada.byron@school.test>: Recipient address rejected; also bob+x@mail.example.org",
      ),
    ).toBe(
      "Can't send mail - all recipients were rejected: 550 5.1.1 <<address>>: Recipient address rejected; also <address>",
    );
    expect(withoutAddresses('connect ECONNREFUSED 127.0.0.1:1025')).toBe(
      'connect ECONNREFUSED 127.0.0.1:1025',
    );
  });
});
