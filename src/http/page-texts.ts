/**
 * The texts of the pages http/ renders itself, the page shell and the error page, in English and
 * German. The login UI's messages (login/messages.ts) extend them, so every page of a language
 * shares one shell text and one sentence per error code.
 */
import type { Locale } from './locale.ts';

export interface PageTexts {
  lang: Locale;
  appName: string;
  /** Above the heading of a page some application asked for. */
  signInTo: (application: string) => string;
  // error page
  errorTitle: string;
  errorCode: string;
  errorDetails: string;
  errorAdvice: string;
  /** A human sentence per OAuth error code; `default` for any other. */
  errors: Record<string, string>;
}

const en: PageTexts = {
  lang: 'en',
  appName: 'Gatehouse',
  signInTo: (application) => `Sign in to ${application}`,
  errorTitle: 'Something went wrong',
  errorCode: 'Error code',
  errorDetails: 'Details',
  errorAdvice: 'Return to the application you came from and try again.',
  errors: {
    invalid_request: 'The sign-in request is invalid.',
    invalid_client: 'The application is not known to this sign-in service.',
    invalid_scope: 'The application asked for permissions that are not available.',
    unauthorized_client: 'The application is not allowed to sign in this way.',
    unsupported_response_type: 'The application asked for a kind of response that is not supported.',
    access_denied: 'Access was denied.',
    login_required: 'You need to sign in.',
    interaction_required: 'You need to sign in.',
    server_error: 'An unexpected error occurred. Please try again later.',
    temporarily_unavailable: 'The service is temporarily unavailable. Please try again in a moment.',
    not_found: 'This page does not exist.',
    method_not_allowed: 'This page cannot be used this way.',
    default: 'The sign-in could not be completed.',
  },
};

const de: PageTexts = {
  lang: 'de',
  appName: 'Gatehouse',
  signInTo: (application) => `Anmelden bei ${application}`,
  errorTitle: 'Etwas ist schiefgelaufen',
  errorCode: 'Fehlercode',
  errorDetails: 'Details',
  errorAdvice: 'Kehren Sie zu der Anwendung zurück, von der Sie kamen, und versuchen Sie es erneut.',
  errors: {
    invalid_request: 'Die Anmeldeanfrage ist ungültig.',
    invalid_client: 'Die Anwendung ist diesem Anmeldedienst nicht bekannt.',
    invalid_scope: 'Die Anwendung hat Berechtigungen angefragt, die nicht verfügbar sind.',
    unauthorized_client: 'Die Anwendung darf diese Art der Anmeldung nicht verwenden.',
    unsupported_response_type: 'Die Anwendung hat eine Antwortart angefragt, die nicht unterstützt wird.',
    access_denied: 'Der Zugriff wurde verweigert.',
    login_required: 'Sie müssen sich anmelden.',
    interaction_required: 'Sie müssen sich anmelden.',
    server_error: 'Ein unerwarteter Fehler ist aufgetreten. Bitte versuchen Sie es später erneut.',
    temporarily_unavailable: 'Der Dienst ist vorübergehend nicht verfügbar. Bitte versuchen Sie es gleich noch einmal.',
    not_found: 'Diese Seite gibt es nicht.',
    method_not_allowed: 'Diese Seite kann so nicht verwendet werden.',
    default: 'Die Anmeldung konnte nicht abgeschlossen werden.',
  },
};

export const PAGE_TEXTS: Record<Locale, PageTexts> = { en, de };
