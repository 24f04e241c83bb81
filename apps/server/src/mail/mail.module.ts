import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { MailMessageRecord } from './mail-message.entity';
import { MailOutbox, MailPruner } from './mail-outbox';

/** Outgoing mail through the outbox (mail-outbox.ts). */
@Module({
  imports: [TypeOrmModule.forFeature([MailMessageRecord])],
  providers: [MailOutbox, MailPruner],
  exports: [MailOutbox],
})
export class MailModule {}
