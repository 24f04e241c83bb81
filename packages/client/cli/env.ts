/**
 * What `platform-listen` reads from its environment, and the one place that reads it: the rest
 * of the command takes these as an argument (flags win over them).
 */
export type ListenEnvironment = {
  PLATFORM_TOKEN?: string;
  PLATFORM_URL?: string;
  PLATFORM_LISTEN_SECRET?: string;
};

export function listenEnvironment(): ListenEnvironment {
  const { PLATFORM_TOKEN, PLATFORM_URL, PLATFORM_LISTEN_SECRET } = process.env;
  return { PLATFORM_TOKEN, PLATFORM_URL, PLATFORM_LISTEN_SECRET };
}
