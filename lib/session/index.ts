export { announceSignInLink } from "./announce";
export { createSignInLink, isSignInLinkUsable, redeemSignInLink, SIGNIN_LINK_PATH, SIGNIN_LINK_TTL_MS, type SignInLink } from "./links";
export { endAllSessions, endSession, sessionCookie, SESSION_TOKEN_LABEL, startSession, type SessionConfig, type StartSessionOptions } from "./sessions";
export { signInWithLinkToken } from "./signin";
