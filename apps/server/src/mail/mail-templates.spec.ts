import {
  emailChangedMail,
  emailChangeMail,
  emailInUseMail,
  invitationMail,
  passwordResetMail,
} from './mail-templates';

describe('invitationMail', () => {
  const input = {
    organizationName: 'Riverside <School> & Co',
    inviter: 'Dana "Head"',
    role: 'admin',
    acceptUrl: 'https://api.school.test/invitations/accept?token=invt_abc&x=1',
    expiresAt: new Date('2026-12-12T10:00:00Z'),
  };

  it('names the inviter, the organization, the role and the link in both parts', () => {
    const mail = invitationMail(input);
    expect(mail.subject).toBe('Dana "Head" invited you to Riverside <School> & Co');
    expect(mail.text).toContain('join Riverside <School> & Co on Platform as admin');
    expect(mail.text).toContain(input.acceptUrl);
    expect(mail.text).toContain('Sat, 12 Dec 2026 10:00:00 GMT');
    expect(mail.html).toContain(
      'href="https://api.school.test/invitations/accept?token=invt_abc&amp;x=1"',
    );
  });

  it('escapes every value in the HTML part', () => {
    const { html } = invitationMail(input);
    expect(html).toContain('Riverside &lt;School&gt; &amp; Co');
    expect(html).toContain('Dana &quot;Head&quot;');
    expect(html).not.toContain('<School>');
  });

  it('says who asks when an API client, not a person, made the invitation', () => {
    const mail = invitationMail({ ...input, inviter: null });
    expect(mail.subject).toBe('You are invited to Riverside <School> & Co');
    expect(mail.text).toMatch(/^An admin of Riverside <School> & Co invited you/);
  });
});

describe('passwordResetMail', () => {
  const input = {
    organizationName: 'Riverside <School>',
    resetUrl: 'https://api.school.test/password-reset/new?token=abc&x=1',
    expiresAt: new Date('2026-12-12T10:30:00Z'),
  };

  it('names the organization, the link and when it stops working, escaped in HTML', () => {
    const mail = passwordResetMail(input);
    expect(mail.subject).toBe('Reset your Platform password for Riverside <School>');
    expect(mail.text).toContain(input.resetUrl);
    expect(mail.text).toContain('until Sat, 12 Dec 2026 10:30:00 GMT');
    expect(mail.html).toContain(
      'href="https://api.school.test/password-reset/new?token=abc&amp;x=1"',
    );
    expect(mail.html).toContain('Riverside &lt;School&gt;');
    expect(mail.html).not.toContain('<School>');
  });
});

describe('the email change mails', () => {
  it('sends the new address the link and names the account it would move', () => {
    const mail = emailChangeMail({
      organizationName: 'Riverside <School>',
      current: 'old@riverside.test',
      confirmUrl: 'https://api.school.test/email-change?token=abc&x=1',
      expiresAt: new Date('2026-12-13T10:00:00Z'),
    });
    expect(mail.text).toContain('old@riverside.test at Riverside <School>');
    expect(mail.text).toContain('https://api.school.test/email-change?token=abc&x=1');
    expect(mail.html).toContain('href="https://api.school.test/email-change?token=abc&amp;x=1"');
    expect(mail.html).not.toContain('<School>');
  });

  it('tells an address in use, and the old address, without a link', () => {
    const inUse = emailInUseMail({ organizationName: 'Riverside <School>' });
    const changed = emailChangedMail({ organizationName: 'Riverside', next: 'new@riverside.test' });
    expect(inUse.text).toContain('already belongs to a Platform account');
    expect(inUse.html).toContain('Riverside &lt;School&gt;');
    expect(changed.text).toContain('is now new@riverside.test');
    expect(`${inUse.text}${changed.text}`).not.toContain('http');
  });
});
