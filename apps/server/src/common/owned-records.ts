import type { ListQuery } from '@platform/contract';
import type { EntityManager, ObjectLiteral, Repository } from 'typeorm';
import type { Sql } from '../database/sql';
import { findOwned, findOwnedForUpdate } from './find-owned';
import { type ListOptions, ListCollection } from './list/find-page';
import { listFieldsFor } from './list/list-fields';
import { pageEnvelope, type PageUrl } from './list/page-envelope';

type Owned = ObjectLiteral & { id: string; organizationId: string };

/**
 * One resource's records of an organization, as every resource service reads them: the list page
 * (columns from the contract's list query), one by id (404 for another organization's), and one
 * locked for a change. The services keep only their rules.
 */
export class OwnedRecords<T extends Owned, R> {
  private readonly listed: ListCollection<T>;

  constructor(
    private readonly sql: Sql,
    private readonly repo: Repository<T>,
    /** The resource's name in a 404's detail ("No course with id …"). */
    private readonly noun: string,
    private readonly toResource: (record: T) => R,
    listQuerySchema: object,
  ) {
    this.listed = new ListCollection(sql, repo, listFieldsFor(repo.metadata, listQuerySchema));
  }

  async list(organizationId: string, query: ListQuery, url: PageUrl, options?: ListOptions) {
    const { rows, total } = await this.listed.find(organizationId, query, options);
    return { data: rows.map(this.toResource), ...pageEnvelope(url, query, total) };
  }

  async retrieve(organizationId: string, id: string): Promise<R> {
    return this.toResource(await this.find(this.repo.manager, organizationId, id));
  }

  find(manager: EntityManager, organizationId: string, id: string): Promise<T> {
    return findOwned(manager, this.repo.target, organizationId, id, this.noun);
  }

  /** The record locked until the transaction ends (PostgreSQL), for a change that reads it first. */
  findForUpdate(manager: EntityManager, organizationId: string, id: string): Promise<T> {
    return findOwnedForUpdate(this.sql, manager, this.repo.target, organizationId, id, this.noun);
  }
}
