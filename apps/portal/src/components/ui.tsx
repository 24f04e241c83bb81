import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { usePageTitle } from '../page-title';
import { navigatedInApp } from '../router';

/** Status and error messages, announced by screen readers (polite for status, assertive for errors). */
export function Notice({ kind, children }: { kind: 'error' | 'success'; children: ReactNode }) {
  return (
    <p className={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </p>
  );
}

/**
 * A one-time secret with a copy button. Focus moves to its heading when it appears, so a
 * keyboard or screen reader user lands on what they must save now.
 */
export function SecretPanel({
  title,
  secret,
  label,
  children,
}: {
  title: string;
  secret: string;
  label: string;
  children?: ReactNode;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  const id = useId();
  useEffect(() => heading.current?.focus(), [secret]);
  return (
    <section className="secret" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`} tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <p>Copy it now: it is shown only this once.</p>
      <CopyField label={label} value={secret} />
      {children}
    </section>
  );
}

export function CopyField({ label, value }: { label: string; value: string }) {
  const id = useId();
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () => {
    navigator.clipboard.writeText(value).then(
      () => setCopied('copied'),
      () => setCopied('failed'),
    );
  };
  return (
    <div className="copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input
          id={id}
          readOnly
          value={value}
          spellCheck={false}
          onFocus={(e) => e.target.select()}
        />
        <button type="button" onClick={copy}>
          Copy<span className="visually-hidden"> {label}</span>
        </button>
      </div>
      <span role="status" className="copy-status">
        {copied === 'copied'
          ? 'Copied.'
          : copied === 'failed'
            ? 'Could not copy; select the text and copy it.'
            : ''}
      </span>
    </div>
  );
}

/** A group of checkboxes with a legend: scopes, event types, grant types. */
export function CheckboxGroup<T extends string>({
  legend,
  options,
  selected,
  onChange,
  describe,
  disabled,
}: {
  legend: string;
  options: readonly T[];
  selected: ReadonlySet<T>;
  onChange: (next: Set<T>) => void;
  describe?: (option: T) => string | undefined;
  disabled?: (option: T) => boolean;
}) {
  const toggle = (option: T, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(option);
    else next.delete(option);
    onChange(next);
  };
  return (
    <fieldset className="checkbox-group">
      <legend>{legend}</legend>
      <ul>
        {options.map((option) => (
          <li key={option}>
            <label>
              <input
                type="checkbox"
                checked={selected.has(option)}
                disabled={disabled?.(option) ?? false}
                onChange={(e) => toggle(option, e.target.checked)}
              />{' '}
              <code>{option}</code>
              {describe?.(option) ? <span className="hint"> {describe(option)}</span> : null}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}

/**
 * Page heading that takes focus when the user moves to its page within the app, so the change
 * is announced and Tab continues from the content; on a fresh load focus starts at the top
 * (the skip link), as on any page. It names the tab too (`usePageTitle`): `title` when the
 * heading is longer than a tab needs, else the heading's text.
 */
export function PageHeading({ children, title }: { children: ReactNode; title?: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  usePageTitle(() => title ?? ref.current?.textContent ?? '');
  useEffect(() => {
    if (navigatedInApp()) ref.current?.focus();
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}
