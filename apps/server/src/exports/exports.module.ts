import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChecksumsService } from './checksums.service';
import { ExportRecord } from './export.entity';
import { ExportFiles } from './export-files';
import {
  ChecksumsController,
  ExportDownloadsController,
  ExportsController,
} from './exports.controller';
import { ExportRunner } from './export-runner';
import { ExportsService } from './exports.service';
import { SnapshotOpener } from './snapshot';

/** Bulk exports from one snapshot, and the collections' reconciliation checksums. */
@Module({
  imports: [TypeOrmModule.forFeature([ExportRecord])],
  controllers: [ExportsController, ChecksumsController, ExportDownloadsController],
  providers: [ExportsService, ExportRunner, ChecksumsService, ExportFiles, SnapshotOpener],
  exports: [ExportsService],
})
export class ExportsModule {}
