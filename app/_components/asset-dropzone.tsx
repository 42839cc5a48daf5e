"use client";

import { useState, type DragEvent } from "react";
import type { ApiAssetUpload } from "@/lib/api-contract/types";
import { messageOf } from "./api";
import { uploadWithProgress } from "./upload";

/** The answer of POST /api/assets/upload (DESIGN.md "HTTP shapes"). */
export type UploadedAsset = ApiAssetUpload;

interface Upload {
  id: number;
  name: string;
  progress: number;
  error?: string;
}

let nextUploadId = 0;

/** Drop files here (or choose them) to upload them as project assets, each with its own progress bar. */
export function AssetDropzone({ projectId, onUploaded }: { projectId: string; onUploaded: (asset: UploadedAsset) => void }) {
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [over, setOver] = useState(false);

  const update = (id: number, patch: Partial<Upload>) =>
    setUploads((current) => current.map((upload) => (upload.id === id ? { ...upload, ...patch } : upload)));

  async function upload(file: File) {
    const id = nextUploadId++;
    setUploads((current) => [...current, { id, name: file.name, progress: 0 }]);
    const form = new FormData();
    form.append("projectId", projectId);
    form.append("file", file);
    try {
      const asset = await uploadWithProgress<UploadedAsset>("/api/assets/upload", form, (progress) => update(id, { progress }));
      setUploads((current) => current.filter((entry) => entry.id !== id));
      onUploaded(asset);
    } catch (failure) {
      update(id, { error: messageOf(failure) });
    }
  }

  function uploadAll(files: FileList | null) {
    for (const file of Array.from(files ?? [])) void upload(file);
  }

  function drop(event: DragEvent) {
    event.preventDefault();
    setOver(false);
    uploadAll(event.dataTransfer.files);
  }

  return (
    <div className="stack">
      <div
        className={`dropzone${over ? " dropzone-over" : ""}`}
        data-testid="asset-dropzone"
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={drop}
      >
        <span>Drop images, fonts, audio or video here (10 MB each), or</span>
        <label className="button">
          choose files
          <input type="file" multiple hidden onChange={(event) => uploadAll(event.target.files)} />
        </label>
      </div>
      {uploads.length > 0 && (
        <ul className="uploads">
          {uploads.map((entry) => (
            <li key={entry.id} className="stack tight">
              <span className="row spread small">
                <span>{entry.name}</span>
                {!entry.error && <span>{Math.round(entry.progress * 100)}%</span>}
              </span>
              {entry.error ? (
                <span className="alert small" role="alert">
                  {entry.error}
                  <button type="button" className="link-button" onClick={() => setUploads((all) => all.filter((item) => item.id !== entry.id))}>
                    Dismiss
                  </button>
                </span>
              ) : (
                <progress value={entry.progress} max={1} />
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
