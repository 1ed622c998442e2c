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
  /** `chosen`: what the person set rather than left at the form's default (see `IChosen`). */
  onSubmit: (body: IRecordRequest, chosen: IChosen) => void;
  onCancel: () => void;
}

/**
 * The kind and topic a person set in the form, null where they left its default: a
 * record that turns into a supersede keeps the old memory's kind and topic for those,
 * as `jupymem remember --supersedes` does without --kind or --topic.
 */
export interface IChosen {
  kind: string | null;
  topic: string | null;
}

export function StatementForm(props: IStatementFormProps): JSX.Element {
  const [statement, setStatement] = React.useState(props.initial?.statement ?? '');
  const [kind, setKind] = React.useState(props.initial?.kind ?? 'note');
  const [kindChosen, setKindChosen] = React.useState(false);
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
      props.onSubmit(body, { kind: kindChosen ? kind : null, topic: body.topic ?? null });
    }
  };
  const blank = !validStatement(statement);
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
          onChange={e => {
            setKind(e.target.value);
            setKindChosen(true);
          }}
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
          disabled={props.busy || blank}
          aria-describedby={blank ? `${id}-hint` : undefined}
        >
          {props.submitLabel}
        </button>
      </div>
      {/* A disabled button says nothing by itself: say what it waits for. */}
      {blank && (
        <p id={`${id}-hint`} className="jp-jupymem-form-hint jp-jupymem-muted">
          Write a statement to {props.submitLabel.toLowerCase()} it.
        </p>
      )}
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
  /** The kind and topic the person set when recording; the rest comes from the old memory. */
  chosen: IChosen;
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
  const { recorded, chosen } = props;
  // What the replacement will be, said before it happens: the old kind and topic unless the person set them.
  const outcome = (oldKind: string) => {
    const kind = chosen.kind ?? oldKind;
    const becomes = kind === oldKind ? `stays a ${kind}` : `becomes a ${kind} (it is a ${oldKind})`;
    const topic = chosen.topic ? `topic ${chosen.topic}` : 'keeps its topic';
    return `Superseding it: ${becomes}, ${topic}.`;
  };
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
            <div className="jp-jupymem-similar-outcome">{outcome(s.kind)}</div>
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
