import { randomBytes } from 'node:crypto';
import { hash, type Options, verify } from '@node-rs/argon2';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { newId } from '../common/ids';
import { ProblemException } from '../common/problem.exception';
import { isUniqueViolation } from '../common/resource-errors';
import { OrganizationsService } from '../organizations/organizations.service';
import { UserRecord } from './entities';

/** OWASP's argon2id baseline: 19 MiB, 2 passes, 1 lane. `2` is `Algorithm.Argon2id` (a const enum). */
const ARGON2_OPTIONS: Options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const MIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_LENGTH = 1024;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Verified against when the email is unknown, so a miss takes as long as a wrong password. */
let decoyHash: Promise<string> | undefined;

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserRecord) private readonly users: Repository<UserRecord>,
    private readonly organizations: OrganizationsService,
  ) {}

  /** Without a password, one is generated (returned so the CLI can print it once). */
  async create(input: {
    organizationId: string;
    email: string;
    password?: string;
  }): Promise<{ user: UserRecord; generatedPassword?: string }> {
    const organization = await this.organizations.findById(input.organizationId);
    if (!organization)
      throw new ProblemException('not_found', `No organization ${input.organizationId}`);
    const email = normalizeEmail(input.email);
    if (!EMAIL_PATTERN.test(email) || email.length > 320)
      throw new ProblemException('validation_error', `${input.email} is not an email address`);
    const generatedPassword =
      input.password === undefined ? randomBytes(18).toString('base64url') : undefined;
    const password = input.password ?? generatedPassword!;
    if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH)
      throw new ProblemException(
        'validation_error',
        `the password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`,
      );
    const now = new Date();
    const user = this.users.create({
      id: newId('user', now.getTime()),
      organizationId: organization.id,
      email,
      passwordHash: await hash(password, ARGON2_OPTIONS),
      createdAt: now,
      updatedAt: now,
    });
    try {
      await this.users.insert(user);
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ProblemException('conflict', `A user with the email ${email} already exists`);
      throw error;
    }
    return { user, ...(generatedPassword && { generatedPassword }) };
  }

  findById(id: string): Promise<UserRecord | null> {
    return this.users.findOneBy({ id });
  }

  /** The user, or null for an unknown email or a wrong password (indistinguishable by timing). */
  async verifyPassword(email: string, password: string): Promise<UserRecord | null> {
    const user =
      password.length <= MAX_PASSWORD_LENGTH
        ? await this.users.findOneBy({ email: normalizeEmail(email) })
        : null;
    decoyHash ??= hash(randomBytes(16).toString('hex'), ARGON2_OPTIONS);
    const matches = await verify(user?.passwordHash ?? (await decoyHash), password).catch(
      () => false,
    );
    return user && matches ? user : null;
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
