import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventOutbox } from '../common/event-outbox';
import { OwnedRecordsFactory } from '../common/owned-records';
import { TransactionRunner } from '../common/transactions';
import { EventRecord } from './event.entity';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { FeedPositions } from './feed-position';

/**
 * The outbox (EventsService, also provided as common's EventOutbox port), the transaction runner
 * every writing module uses with it, and the domain services' shared write flow built on both
 * (OwnedRecordsFactory).
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([EventRecord])],
  controllers: [EventsController],
  providers: [
    EventsService,
    { provide: EventOutbox, useExisting: EventsService },
    TransactionRunner,
    OwnedRecordsFactory,
    FeedPositions,
  ],
  exports: [EventsService, EventOutbox, TransactionRunner, OwnedRecordsFactory, FeedPositions],
})
export class EventsModule {}
