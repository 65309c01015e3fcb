/** Stops what the global setup started (containers); local servers are left running on purpose. */
export default async function globalTeardown(): Promise<void> {
  const infra = globalThis.__PLATFORM_TEST_INFRA__;
  globalThis.__PLATFORM_TEST_INFRA__ = undefined;
  await infra?.stop();
}
