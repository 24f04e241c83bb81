import { type DynamicModule, Global, Module } from '@nestjs/common';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/env';
import { dataSourceOptions } from './data-source';
import type { ModuleSchema } from './module-schema';
import { Sql } from './sql';

/** The connection, and `Sql` (the dialect and statements with named parameters) for every module. */
@Global()
@Module({})
export class DatabaseModule {
  /** `schema`: the modules' entities and migrations, composed by the app (see `schema.ts`). */
  static forRoot(config: AppConfig, schema: readonly ModuleSchema[]): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(config.database, schema),
          migrationsRun: config.database.migrateOnStart,
          // Fail boot at once instead of retrying for minutes on a bad DATABASE_URL.
          retryAttempts: 0,
        }),
      ],
      providers: [
        {
          provide: Sql,
          useFactory: (dataSource: DataSource) =>
            new Sql(dataSource, {
              listTotalCountAhead: config.list.totalCountAhead,
              listSearchCountAhead: config.list.searchCountAhead,
              listSearchScanRows: config.list.searchScanRows,
            }),
          inject: [getDataSourceToken()],
        },
      ],
      exports: [Sql],
    };
  }
}
