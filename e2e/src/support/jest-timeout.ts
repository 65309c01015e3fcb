// The end-to-end tests wait on whole pipelines and webhook deliveries.
jest.setTimeout(60_000);
