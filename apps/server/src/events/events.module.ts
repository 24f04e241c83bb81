import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TransactionRunner } from '../common/transactions';
import { EventRecord } from './event.entity';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The outbox and the transaction runner every writing module uses with it. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([EventRecord])],
  controllers: [EventsController],
  providers: [EventsService, TransactionRunner],
  exports: [EventsService, TransactionRunner],
})
export class EventsModule {}
