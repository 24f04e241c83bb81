import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdempotencyModule } from '../idempotency/idempotency.module';
import { ImportRecord } from './import.entity';
import { ImportRunner } from './import-runner';
import { ImportsController } from './imports.controller';
import { ImportsService } from './imports.service';

/** SIS imports: files of one collection's records, applied through its batch upsert. */
@Module({
  imports: [TypeOrmModule.forFeature([ImportRecord]), IdempotencyModule],
  controllers: [ImportsController],
  providers: [ImportsService, ImportRunner],
})
export class ImportsModule {}
