import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { Organization } from '../organizations/organization.entity';
import { OrganizationsModule } from '../organizations/organizations.module';
import { SeedModule } from '../seed/seed.module';
import { SandboxTriggerService } from './sandbox-trigger.service';
import { SandboxesController, SandboxTriggerController } from './sandboxes.controller';
import { SandboxesService } from './sandboxes.service';

/** Sandbox organizations and the trigger (docs/sandboxes.md). */
@Module({
  imports: [TypeOrmModule.forFeature([Organization]), OrganizationsModule, AuthModule, SeedModule],
  controllers: [SandboxesController, SandboxTriggerController],
  providers: [SandboxesService, SandboxTriggerService],
})
export class SandboxesModule {}
