import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RequestLogRecord } from './request-log.entity';
import { RequestLogWriter } from './request-log-writer';
import { RequestLogsController } from './request-logs.controller';
import { RequestLogsService } from './request-logs.service';
import { UsageController } from './usage.controller';
import { UsageService } from './usage.service';

/**
 * Each organization's API requests: recorded in batches, listed, pruned past retention, and
 * summed per hour with its webhook deliveries (`GET /v1/usage`).
 */
@Module({
  imports: [TypeOrmModule.forFeature([RequestLogRecord])],
  controllers: [RequestLogsController, UsageController],
  providers: [RequestLogsService, RequestLogWriter, UsageService],
  exports: [RequestLogsService, RequestLogWriter],
})
export class RequestLogsModule {}
