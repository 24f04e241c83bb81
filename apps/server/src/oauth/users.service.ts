import { randomBytes } from 'node:crypto';
import { hash, type Options, verify } from '@node-rs/argon2';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Role } from '@platform/contract';
import type { EntityManager, Repository } from 'typeorm';
import { Clock } from '../common/clock';
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
    private readonly clock: Clock,
  ) {}

  /** Without a password, one is generated (returned so the CLI can print it once). */
  async create(
    input: {
      organizationId: string;
      email: string;
      password?: string;
      /** Default `admin`: an operator making a user is setting up whoever runs the organization. */
      role?: Role;
      name?: string | null;
    },
    manager?: EntityManager,
  ): Promise<{ user: UserRecord; generatedPassword?: string }> {
    const organization = await this.organizations.findById(input.organizationId);
    if (!organization)
      throw new ProblemException('not_found', `No organization ${input.organizationId}`);
    const email = normalizeEmail(input.email);
    if (!EMAIL_PATTERN.test(email) || email.length > 320)
      throw new ProblemException('validation_error', `${input.email} is not an email address`);
    const generatedPassword =
      input.password === undefined ? randomBytes(18).toString('base64url') : undefined;
    const password = input.password ?? generatedPassword!;
    assertPasswordLength(password);
    const now = this.clock.now();
    const user = this.users.create({
      id: newId('user', now.getTime()),
      organizationId: organization.id,
      email,
      role: input.role ?? 'admin',
      name: input.name?.trim() || null,
      passwordHash: await hashPassword(password),
      createdAt: now,
      updatedAt: now,
    });
    try {
      await (manager ?? this.users.manager).insert(UserRecord, user);
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

  /** 400 when `current` is not the user's password (so a stolen token cannot lock them out). */
  /** Changes the password; `record` runs in the same transaction as the update (the audit entry). */
  async changePassword(
    userId: string,
    current: string,
    next: string,
    record?: (manager: EntityManager) => Promise<void>,
  ): Promise<void> {
    const user = await this.users.findOneBy({ id: userId });
    if (!user) throw new ProblemException('not_found', `No user ${userId}`);
    const matches =
      current.length <= MAX_PASSWORD_LENGTH &&
      (await verify(user.passwordHash, current).catch(() => false));
    if (!matches) {
      throw new ProblemException('validation_error', 'current_password is not your password', {
        errors: [{ path: 'body.current_password', message: 'not your password', code: 'invalid' }],
      });
    }
    assertPasswordLength(next, 'body.new_password');
    const now = this.clock.now();
    const passwordHash = await hashPassword(next);
    await this.users.manager.transaction(async (manager) => {
      await manager.update(UserRecord, { id: userId }, { passwordHash, updatedAt: now });
      await record?.(manager);
    });
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

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_OPTIONS);
}

export function assertPasswordLength(password: string, path?: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    const message = `the password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters long`;
    throw new ProblemException(
      'validation_error',
      message,
      path ? { errors: [{ path, message, code: 'invalid_length' }] } : undefined,
    );
  }
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
