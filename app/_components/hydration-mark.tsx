"use client";

import { useEffect } from "react";

/**
 * Marks the document once React has hydrated it (`<html data-hydrated>`): until then the server's
 * HTML shows, but typing into a field can be reset and a click can find no handler. Browser tests
 * wait for the mark before they act.
 */
export function HydrationMark() {
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  return null;
}
