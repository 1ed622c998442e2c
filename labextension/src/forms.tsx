/**
 * The small forms the sidebar opens in place: record / supersede / keep as
 * lesson share one (statement, kind, topic), retire asks for a reason, and a
 * record that nearly repeats an active memory offers to supersede it instead.
 */
import * as React from 'react';

import { clipText, validStatement } from './logic';
import { KINDS } from './tokens';
import type { IRecordRequest, IRecorded } from './tokens';

export interface IStatementFormProps {
  title: string;
  submitLabel: string;
  initial?: { statement?: string; kind?: string; topic?: string | null };
  note?: React.ReactNode;
  /** Offer "private" (this machine only): when the repository shares its memory. */
  allowPrivate?: boolean;
  busy: boolean;
  onSubmit: (body: IRecordRequest) => void;
  onCancel: () => void;
}

export function StatementForm(props: IStatementFormProps): JSX.Element {
  const [statement, setStatement] = React.useState(props.initial?.statement ?? '');
  const [kind, setKind] = React.useState(props.initial?.kind ?? 'note');
  const [topic, setTopic] = React.useState(props.initial?.topic ?? '');
  const [isPrivate, setPrivate] = React.useState(false);
  const id = React.useId();
  const submit = (e?: React.FormEvent) => {
    e?.preventDefault();
    if (validStatement(statement) && !props.busy) {
      const body: IRecordRequest = { statement: statement.trim(), kind, topic: topic.trim() || null };
      if (props.allowPrivate && isPrivate) {
        body.private = true;
      }
      props.onSubmit(body);
    }
  };
  return (
    <form
      className="jp-jupymem-form"
      onSubmit={submit}
      onKeyDown={e => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          props.onCancel();
        } else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
          submit();
        }
      }}
    >
      <div className="jp-jupymem-form-title">{props.title}</div>
      {props.note}
      <label htmlFor={`${id}-statement`}>Statement</label>
      <textarea
        id={`${id}-statement`}
        className="jp-mod-styled jp-jupymem-textarea"
        value={statement}
        rows={4}
        autoFocus
        onChange={e => setStatement(e.target.value)}
        placeholder="One sentence someone should not have to rediscover"
      />
      <div className="jp-jupymem-form-row">
        <label htmlFor={`${id}-kind`}>Kind</label>
        <select
          id={`${id}-kind`}
          className="jp-mod-styled"
          value={kind}
          onChange={e => setKind(e.target.value)}
        >
          {KINDS.map(k => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
        <label htmlFor={`${id}-topic`}>Topic</label>
        <input
          id={`${id}-topic`}
          className="jp-mod-styled jp-jupymem-topic"
          value={topic}
          onChange={e => setTopic(e.target.value)}
          placeholder="optional"
        />
      </div>
      {props.allowPrivate && (
        <label className="jp-jupymem-check" title="Never written to the shared .jupymem/ folder">
          <input type="checkbox" checked={isPrivate} onChange={e => setPrivate(e.target.checked)} /> Private (this
          machine only)
        </label>
      )}
      <div className="jp-jupymem-form-actions">
        <button type="button" className="jp-mod-styled jp-jupymem-cancel" onClick={props.onCancel}>
          Cancel
        </button>
        <button
          type="submit"
          className="jp-mod-styled jp-mod-accept"
          disabled={props.busy || !validStatement(statement)}
        >
          {props.submitLabel}
        </button>
      </div>
    </form>
  );
}

export interface IRetireFormProps {
  busy: boolean;
  onSubmit: (reason: string | null) => void;
  onCancel: () => void;
}

export function RetireForm(props: IRetireFormProps): JSX.Element {
  const [reason, setReason] = React.useState('');
  const id = React.useId();
  return (
    <form
      className="jp-jupymem-form"
      onSubmit={e => {
        e.preventDefault();
        props.onSubmit(reason.trim() || null);
      }}
      onKeyDown={e => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          props.onCancel();
        }
      }}
    >
      <label htmlFor={`${id}-reason`}>Why is it no longer true?</label>
      <input
        id={`${id}-reason`}
        className="jp-mod-styled"
        value={reason}
        autoFocus
        onChange={e => setReason(e.target.value)}
        placeholder="reason (kept in history)"
      />
      <div className="jp-jupymem-form-actions">
        <button type="button" className="jp-mod-styled jp-jupymem-cancel" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit" className="jp-mod-styled jp-jupymem-danger" disabled={props.busy}>
          Retire
        </button>
      </div>
    </form>
  );
}

export interface ISimilarOfferProps {
  recorded: IRecorded;
  busy: boolean;
  /** Supersede `oldId` with the statement just recorded. */
  onSupersede: (oldId: string) => void;
  onDismiss: () => void;
}

/**
 * Shown after a record whose statement nearly repeats an active memory: the record
 * is kept, and "Supersede instead" makes the new statement replace the old one, as
 * if it had been recorded with --supersedes in the first place.
 */
export function SimilarOffer(props: ISimilarOfferProps): JSX.Element {
  const { recorded } = props;
  return (
    <div className="jp-jupymem-similar" role="status">
      <div>
        Recorded <code>{recorded.id}</code>. It is close to{' '}
        {recorded.similar.length === 1 ? 'an active memory' : `${recorded.similar.length} active memories`}:
      </div>
      <ul className="jp-jupymem-similar-list">
        {recorded.similar.map(s => (
          <li key={s.id} data-similar-id={s.id}>
            <span className="jp-jupymem-similar-statement">{clipText(s.statement, 160)}</span>{' '}
            <span className="jp-jupymem-muted">
              ({s.kind}, <code>{s.id}</code>)
            </span>
            <button
              type="button"
              className="jp-mod-styled jp-mod-accept jp-jupymem-supersede-instead"
              disabled={props.busy}
              title={`Close ${s.id}: the statement just recorded replaces it`}
              onClick={() => props.onSupersede(s.id)}
            >
              Supersede instead
            </button>
          </li>
        ))}
      </ul>
      <button type="button" className="jp-mod-styled jp-jupymem-cancel" onClick={props.onDismiss}>
        Keep both
      </button>
    </div>
  );
}
