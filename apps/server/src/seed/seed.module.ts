import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { SeedService } from './seed.service';

@Module({
  imports: [OrganizationsModule, AuthModule],
  providers: [SeedService],
  exports: [SeedService],
})
export class SeedModule {}
