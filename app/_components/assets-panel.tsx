"use client";

import { useEffect, useRef, useState } from "react";
import type { ApiAsset } from "@/lib/api-contract/types";
import { callApi, callApiOrToast, messageOf } from "./api";
import { AssetDropzone, type UploadedAsset } from "./asset-dropzone";
import { formatBytes } from "./upload";

/**
 * One entry of the sandbox's asset manifest (spec 2.10), as GET /api/assets answers it. `blobUrl`
 * is versioned per upload, the same URL the upload answered, so a re-upload shows its new bytes.
 */
export type AssetEntry = ApiAsset;

const byName = (a: AssetEntry, b: AssetEntry) => a.filename.localeCompare(b.filename);

/** The project's assets: upload by drag and drop, list from the manifest with thumbnails, delete. */
export function AssetsPanel({ projectId }: { projectId: string }) {
  const [assets, setAssets] = useState<AssetEntry[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  // A list still on its way may predate an upload or a delete made meanwhile: then it is asked for again.
  const [listRequest, setListRequest] = useState(0);
  const listLoading = useRef(true);

  useEffect(() => {
    let cancelled = false;
    listLoading.current = true;
    callApi<{ assets: AssetEntry[] }>(`/api/assets?projectId=${encodeURIComponent(projectId)}`).then(
      (answer) => {
        if (cancelled) return;
        listLoading.current = false;
        setAssets([...answer.assets].sort(byName));
      },
      (failure) => {
        if (cancelled) return;
        listLoading.current = false;
        setError(messageOf(failure));
        setAssets([]);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [projectId, listRequest]);

  const askAgainIfLoading = () => {
    if (listLoading.current) setListRequest((request) => request + 1);
  };

  function uploaded(asset: UploadedAsset) {
    const entry: AssetEntry = { filename: asset.filename, blobUrl: asset.blobUrl, contentType: asset.contentType, size: asset.size };
    setAssets((current) => [...(current ?? []).filter((item) => item.filename !== entry.filename), entry].sort(byName));
    askAgainIfLoading();
  }

  async function remove(filename: string) {
    setError(null);
    try {
      await callApiOrToast("/api/assets/delete", { method: "DELETE", json: { projectId, filename } });
      setAssets((current) => (current ?? []).filter((item) => item.filename !== filename));
      askAgainIfLoading();
    } catch (failure) {
      setError(messageOf(failure));
    }
  }

  return (
    <section id="assets" className="card stack" aria-labelledby="assets-title">
      <h2 id="assets-title">Assets</h2>
      <AssetDropzone projectId={projectId} onUploaded={uploaded} />
      {error && (
        <p className="alert" role="alert">
          {error}
        </p>
      )}
      {assets === null ? (
        <p className="muted">Loading…</p>
      ) : assets.length === 0 ? (
        !error && <p className="muted">No assets yet.</p>
      ) : (
        <ul className="asset-grid" aria-label="Assets">
          {assets.map((asset) => (
            <li key={asset.filename} className="asset" data-filename={asset.filename}>
              {asset.contentType.startsWith("image/") ? (
                // eslint-disable-next-line @next/next/no-img-element -- blob URLs from any store; no optimiser needed
                <img src={asset.blobUrl} alt={asset.filename} loading="lazy" />
              ) : (
                <span className="asset-type">{asset.filename.split(".").pop()?.toUpperCase()}</span>
              )}
              <a href={asset.blobUrl} target="_blank" rel="noreferrer" className="asset-name" title={asset.filename}>
                {asset.filename}
              </a>
              <span className="row spread small muted">
                {formatBytes(asset.size)}
                <button type="button" className="link-button danger-text" onClick={() => remove(asset.filename)} aria-label={`Delete ${asset.filename}`}>
                  Delete
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
