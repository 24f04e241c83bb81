import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OwnedRecordsFactory } from '../common/owned-records';
import { TransactionRunner } from '../common/transactions';
import { EventRecord } from './event.entity';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/**
 * The outbox, the transaction runner every writing module uses with it, and the domain
 * services' shared write flow built on both (OwnedRecordsFactory).
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([EventRecord])],
  controllers: [EventsController],
  providers: [EventsService, TransactionRunner, OwnedRecordsFactory],
  exports: [EventsService, TransactionRunner, OwnedRecordsFactory],
})
export class EventsModule {}
