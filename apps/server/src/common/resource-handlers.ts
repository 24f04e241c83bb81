/**
 * The ts-rest handlers of a resource's standard routes, written once: list (200, a page), retrieve
 * (200), create (201), update (200) and delete (200), each a call to the service method of the
 * same name with the owner first (the principal, or an organization id) and `extra` last (e.g.
 * the audit actor). Each handler is typed by its service method, not by a route, so the
 * controller's `tsRestHandler` still checks the request and the response body against the
 * contract.
 */
import type { IdKind } from '@platform/contract';
import { publicId } from './ids';
import type { PageUrl } from './list/page-envelope';

interface RecordRequest {
  params: { id: string };
}

/** A route on one record (`/:id`, `/:id/<verb>`) without a body: `run` with its id. */
export function onRecord<const S extends number, T>(status: S, run: (id: string) => Promise<T>) {
  return async ({ params }: RecordRequest) => ({ status, body: await run(params.id) });
}

/**
 * A delete that answers the stub (`{ id, object, deleted: true }`, the id with its `kind` prefix)
 * rather than what the service returns: `run` with the id, then the stub.
 */
export function deletedStub<const O extends string, K extends IdKind>(
  object: O,
  kind: K,
  run: (id: string) => Promise<unknown>,
) {
  return onRecord(200, async (id) => {
    await run(id);
    return { id: publicId(kind, id), object, deleted: true as const };
  });
}

/** `list`: the page of the request's query. */
export function listHandler<O, Q, L>(
  service: { list(owner: O, query: Q, url: PageUrl): Promise<L> },
  owner: O,
  url: PageUrl,
) {
  return async ({ query }: { query: Q }) => ({
    status: 200 as const,
    body: await service.list(owner, query, url),
  });
}

/** `list` (the page of the request's query) and `retrieve` (one record by id). */
export function readHandlers<O, Q, L, R>(
  service: {
    list(owner: O, query: Q, url: PageUrl): Promise<L>;
    retrieve(owner: O, id: string): Promise<R>;
  },
  owner: O,
  url: PageUrl,
) {
  return {
    list: listHandler(service, owner, url),
    retrieve: onRecord(200, (id) => service.retrieve(owner, id)),
  };
}

export function createHandler<O, B, C, A extends unknown[]>(
  service: { create(owner: O, body: B, ...extra: A): Promise<C> },
  owner: O,
  ...extra: A
) {
  return async ({ body }: { body: B }) => ({
    status: 201 as const,
    body: await service.create(owner, body, ...extra),
  });
}

export function updateHandler<O, B, U, A extends unknown[]>(
  service: { update(owner: O, id: string, body: B, ...extra: A): Promise<U> },
  owner: O,
  ...extra: A
) {
  return async ({ params, body }: RecordRequest & { body: B }) => ({
    status: 200 as const,
    body: await service.update(owner, params.id, body, ...extra),
  });
}

export function deleteHandler<O, D, A extends unknown[]>(
  service: { delete(owner: O, id: string, ...extra: A): Promise<D> },
  owner: O,
  ...extra: A
) {
  return onRecord(200, (id) => service.delete(owner, id, ...extra));
}

/** `POST <collection>/batch`: the items upserted by external id (common/batch-upsert.ts). */
export function batchHandler<O, I, R>(
  service: { batchUpsert(owner: O, items: readonly I[]): Promise<R> },
  owner: O,
) {
  return async ({ body }: { body: { items: I[] } }) => ({
    status: 200 as const,
    body: await service.batchUpsert(owner, body.items),
  });
}

/** All five, for a service with the whole set; a controller spreads them and adds its own routes. */
export function resourceHandlers<O, Q, L, R, B, C, P, U, D, A extends unknown[]>(
  service: {
    list(owner: O, query: Q, url: PageUrl): Promise<L>;
    retrieve(owner: O, id: string): Promise<R>;
    create(owner: O, body: B, ...extra: A): Promise<C>;
    update(owner: O, id: string, body: P, ...extra: A): Promise<U>;
    delete(owner: O, id: string, ...extra: A): Promise<D>;
  },
  owner: O,
  url: PageUrl,
  ...extra: A
) {
  return {
    ...readHandlers(service, owner, url),
    create: createHandler(service, owner, ...extra),
    update: updateHandler(service, owner, ...extra),
    delete: deleteHandler(service, owner, ...extra),
  };
}
