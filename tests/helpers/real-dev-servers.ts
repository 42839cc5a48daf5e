// Imported first by the test files that prove the real toolchains: they run Expo's dev server
// (Metro) and the backend dev server the product runs by default, not the stand-ins that
// tests/setup.ts configures for every other file.
delete process.env.APP_DEV_COMMAND;
delete process.env.BACKEND_DEV_COMMAND;
