import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { pendingMigrations } from '../database/migration-status.js';

/**
 * Whether the database has every migration this code was built with, for the readiness probe. With
 * MIGRATIONS_RUN=false an instance starts before another process (an instance, the migration job) has
 * migrated, and must not take traffic until then. The migrations are fixed at build time, so once the
 * database has them all the verdict holds for the life of the process: only a pending state is checked
 * again (one small query per probe).
 */
@Injectable()
export class MigrationReadiness {
  private upToDate = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async migrated(): Promise<boolean> {
    if (this.upToDate) return true;
    this.upToDate = (await pendingMigrations(this.dataSource)) === 0;
    return this.upToDate;
  }
}
