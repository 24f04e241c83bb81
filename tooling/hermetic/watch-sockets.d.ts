/** Every TCP connect that reaches libuv from now until `restore()`, by address. */
export function watchSocketConnects(): { seen: string[]; restore(): void };
