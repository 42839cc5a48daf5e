-- Where the local emulator's next deployment port search starts (lib/emulator/listeners.ts): ports
-- move forward through EMULATOR_PORT_RANGE, so a deleted deployment's URL is not handed to the
-- next deployment until the range wraps.
create sequence if not exists emulator_port_cursor minvalue 1 start 1;
