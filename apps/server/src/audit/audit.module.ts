import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEventRecord } from './audit-event.entity';
import { AuditEventsController } from './audit.controller';
import { AuditService } from './audit.service';

/** The audit log every changing module writes to; global like the events outbox. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEventRecord])],
  controllers: [AuditEventsController],
  providers: [AuditService],
  exports: [AuditService],
})
export class AuditModule {}
