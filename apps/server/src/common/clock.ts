import { type DynamicModule, Global, Injectable, Module } from '@nestjs/common';

/**
 * The current time, injected wherever a service stamps or compares times, so a test can move it
 * (expire a key, a token, a lease) without sleeping: `startTestServer({ clock })` swaps it.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date(this.nowMs());
  }

  nowMs(): number {
    return Date.now();
  }
}

/** Provides the one `Clock` to every module; `clock` replaces the system clock (tests). */
@Global()
@Module({})
export class ClockModule {
  static forRoot(clock: Clock = new Clock()): DynamicModule {
    return {
      module: ClockModule,
      providers: [{ provide: Clock, useValue: clock }],
      exports: [Clock],
    };
  }
}
