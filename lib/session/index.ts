export { announceSignInLink } from "./announce";
export { createSignInLink, redeemSignInLink, SIGNIN_LINK_PATH, SIGNIN_LINK_TTL_MS, type SignInLink } from "./links";
export { endSession, sessionCookie, SESSION_MAX_AGE_SECONDS, SESSION_TOKEN_LABEL, startSession } from "./sessions";
