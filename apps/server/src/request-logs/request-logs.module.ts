import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RequestLogRecord } from './request-log.entity';
import { RequestLogWriter } from './request-log-writer';
import { RequestLogsController } from './request-logs.controller';
import { RequestLogsService } from './request-logs.service';

/** Each organization's API requests: recorded in batches, listed, pruned past retention. */
@Module({
  imports: [TypeOrmModule.forFeature([RequestLogRecord])],
  controllers: [RequestLogsController],
  providers: [RequestLogsService, RequestLogWriter],
  exports: [RequestLogsService, RequestLogWriter],
})
export class RequestLogsModule {}
