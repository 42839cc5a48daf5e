import { apiErrorFrom, ApiError } from "./api";

/**
 * POSTs a multipart form and reports upload progress (0 to 1). `fetch` cannot report request
 * progress, hence XMLHttpRequest. Resolves with the parsed JSON answer; rejects with an
 * `ApiError` carrying the server's message.
 */
export function uploadWithProgress<T>(url: string, form: FormData, onProgress: (fraction: number) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open("POST", url);
    request.responseType = "json";
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      if (request.status >= 200 && request.status < 300) resolve(request.response as T);
      else reject(apiErrorFrom(request.status, request.response));
    };
    request.onerror = () => reject(new ApiError(0, "network_error", "The upload was interrupted."));
    request.send(form);
  });
}

/** `1536` → `1.5 KB`. */
export function formatBytes(size: number): string {
  if (size < 1024) return `${size} B`;
  const units = ["KB", "MB", "GB"];
  let value = size / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
