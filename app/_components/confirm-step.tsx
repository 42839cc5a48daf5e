import type { ReactNode } from "react";

/**
 * The second step of a destructive action: what it will do, the action's button and Cancel.
 * Both buttons are disabled while the action runs.
 */
export function ConfirmStep(props: {
  children: ReactNode;
  action: string;
  busyAction: string;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  testId?: string;
}) {
  return (
    <div className="confirm stack" data-testid={props.testId}>
      {props.children}
      <div className="row">
        <button type="button" className="danger" onClick={props.onConfirm} disabled={props.busy}>
          {props.busy ? props.busyAction : props.action}
        </button>
        <button type="button" onClick={props.onCancel} disabled={props.busy}>
          Cancel
        </button>
      </div>
    </div>
  );
}
