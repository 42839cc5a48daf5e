"use client";

import { useEffect, useState } from "react";

export type ToastTone = "success" | "error";

interface Toast {
  id: number;
  message: string;
  tone: ToastTone;
}

const TOAST_EVENT = "dashboard-toast";
/** Long enough to read a sentence; a toast can also be closed at once, and an error stays until it is. */
const TOAST_VISIBLE_MS = 8_000;

let nextToastId = 1;

/** Shows a toast from anywhere in the dashboard (the host in the root layout displays it). */
export function showToast(message: string, tone: ToastTone): void {
  window.dispatchEvent(new CustomEvent<Toast>(TOAST_EVENT, { detail: { id: nextToastId++, message, tone } }));
}

/** The stack of toasts, bottom right; announced to screen readers as they appear. */
export function ToastHost() {
  const [toasts, setToasts] = useState<Toast[]>([]);

  useEffect(() => {
    const timers = new Set<ReturnType<typeof setTimeout>>();
    const onToast = (event: Event) => {
      const toast = (event as CustomEvent<Toast>).detail;
      setToasts((current) => [...current, toast]);
      if (toast.tone === "error") return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        setToasts((current) => current.filter((item) => item.id !== toast.id));
      }, TOAST_VISIBLE_MS);
      timers.add(timer);
    };
    window.addEventListener(TOAST_EVENT, onToast);
    return () => {
      window.removeEventListener(TOAST_EVENT, onToast);
      for (const timer of timers) clearTimeout(timer);
    };
  }, []);

  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((toast) => (
        <div key={toast.id} className={`toast toast-${toast.tone}`} role={toast.tone === "error" ? "alert" : "status"} data-testid="toast" data-tone={toast.tone}>
          <span>{toast.message}</span>
          <button type="button" className="link-button" aria-label="Close" onClick={() => setToasts((current) => current.filter((item) => item.id !== toast.id))}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** Shows one toast when the page opens (the outcome of a round trip elsewhere, e.g. OAuth). */
export function ToastOnOpen({ message, tone }: { message: string | null; tone: ToastTone }) {
  useEffect(() => {
    if (message) showToast(message, tone);
  }, [message, tone]);
  return null;
}
