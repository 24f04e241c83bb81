import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventOutbox } from '../common/event-outbox';
import { OwnedRecordsFactory } from '../common/owned-records';
import { TransactionRunner } from '../common/transactions';
import { EventRecord, FeedHead } from './event.entity';
import { EventsController } from './events.controller';
import { ChangeFeedService } from './change-feed.service';
import { EventsService } from './events.service';
import { FeedPositions } from './feed-position';

/**
 * The outbox (EventsService, also provided as common's EventOutbox port), the transaction runner
 * every writing module uses with it, and the domain services' shared write flow built on both
 * (OwnedRecordsFactory).
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([EventRecord, FeedHead])],
  controllers: [EventsController],
  providers: [
    EventsService,
    FeedPositions,
    ChangeFeedService,
    { provide: EventOutbox, useExisting: EventsService },
    TransactionRunner,
    OwnedRecordsFactory,
  ],
  exports: [EventsService, FeedPositions, EventOutbox, TransactionRunner, OwnedRecordsFactory],
})
export class EventsModule {}
