/**
 * Every text of the login UI, in English and German (docs/decisions.md#login-pages). Pages take them
 * from here only; the page shell's and the error page's texts, which http/ renders for other
 * endpoints too, come from http/page-texts.ts.
 */
import { negotiateLocale, type Locale } from '../http/locale.ts';
import { PAGE_TEXTS, type PageTexts } from '../http/page-texts.ts';
import type { PolicyRule } from '../domain/credentials/password-policy.ts';

export interface Messages extends PageTexts {
  required: string;
  tooLong: string;
  fixFields: string;
  // login name step
  loginTitle: string;
  loginIntro: string;
  loginName: string;
  loginNameHint: string;
  next: string;
  createAccount: string;
  chooseSignedIn: string;
  // password step
  passwordTitle: string;
  signingInAs: string;
  useAnotherAccount: string;
  password: string;
  signIn: string;
  invalidCredentials: string;
  locked: (minutes: number) => string;
  /** Too many failed sign-ins from this address (docs/security.md 10.11). */
  throttled: (seconds: number) => string;
  // one-time password step
  otpTitle: string;
  otpIntro: string;
  otpCode: string;
  invalidOtp: string;
  otpJustUsed: string;
  // passkeys (docs/passkeys.md)
  passkeySignIn: string;
  passkeyTitle: string;
  passkeyIntro: string;
  usePassword: string;
  /** The one answer to every refused passkey (docs/decisions.md#one-answer-for-every-refused-passkey). */
  passkeyRefused: string;
  // the self-service page /ui/login/passkeys
  passkeysTitle: string;
  passkeysIntro: string;
  passkeysSignedInAs: string;
  passkeysNone: string;
  passkeysChooseAccount: string;
  passkeysOtherAccount: string;
  passkeyName: string;
  passkeyNameHint: string;
  passkeyCreated: string;
  passkeyLastUsed: string;
  passkeyNeverUsed: string;
  passkeyAdd: string;
  passkeyRemove: string;
  passkeyAddFailed: string;
  passkeyLastMethod: string;
  passkeysReauth: string;
  passkeyAddedNotice: string;
  passkeyRemovedNotice: string;
  passkeyRemoveTitle: string;
  passkeyRemoveText: (name: string) => string;
  passkeyRemoveConfirm: string;
  passkeysDone: string;
  passkeysDoneTitle: string;
  passkeysDoneText: string;
  signInAgain: string;
  // a mailed registration link (CreatePasskeyRegistrationLink) on /ui/login/passkeys
  passkeyLinkIntro: string;
  passkeyLinkFailed: string;
  passkeyLinkDone: string;
  passkeyLinkAccount: string;
  // account selection
  accountsTitle: string;
  accountsIntro: string;
  sessionGone: string;
  // registration
  registerTitle: string;
  userName: string;
  userNameHint: string;
  userNameInvalid: string;
  userNameTaken: string;
  email: string;
  emailInvalid: string;
  givenName: string;
  familyName: string;
  passwordConfirmation: string;
  policyIntro: string;
  policy: Record<PolicyRule, string>;
  policyUnmet: (missing: string[]) => string;
  passwordMismatch: string;
  haveAccount: string;
  // forgot password (docs/login-ui.md#forgot-your-password)
  forgotPassword: string;
  resetTitle: string;
  resetIntro: string;
  resetSend: string;
  resetSentTitle: string;
  resetSentText: string;
  backToSignIn: string;
  setPasswordTitle: string;
  setPasswordIntro: string;
  newPassword: string;
  setPasswordSubmit: string;
  resetLinkInvalid: string;
  resetLinkExpired: string;
  passwordChangedTitle: string;
  passwordChangedText: string;
  passwordChangedNotice: string;
  // logged out
  loggedOutTitle: string;
  loggedOutText: string;
  logoutTitle: string;
  logoutText: string;
  logoutButton: string;
  logoutCancel: string;
  logoutCancelledTitle: string;
  logoutCancelledText: string;
  logoutNoSession: string;
  logoutContinue: string;
  // email verification (the link of a code mail)
  verifyEmailTitle: string;
  verifyEmailIntro: string;
  verifyEmailUserId: string;
  verifyEmailCode: string;
  verifyEmailSubmit: string;
  verifyEmailInvalid: string;
  verifyEmailExpired: string;
  emailVerifiedTitle: string;
  emailVerifiedText: string;
  // the login UI's own refusals
  requestExpired: string;
  csrfFailed: string;
  registrationUnavailable: string;
  registrationLimited: (minutes: number) => string;
  // the login policy (docs/branding-and-login-policy.md#what-the-login-pages-honour)
  noPasswordTitle: string;
  noPasswordPasskeys: string;
  noSignInMethodTitle: string;
  noSignInMethod: string;
  resetUnavailable: string;
  continue: string;
  // setting up a second factor when the login policy forces one (docs/login-ui.md#setting-up-a-second-factor)
  mfaSetupTitle: string;
  mfaSetupIntro: string;
  mfaSetupAppTitle: string;
  mfaSetupAppIntro: string;
  mfaSetupQrAlt: string;
  mfaSetupSecret: string;
  mfaSetupVerify: string;
  mfaSetupPasskeyTitle: string;
  mfaSetupPasskeyIntro: string;
  mfaSetupPasskeyButton: string;
  // external identity providers (docs/federation.md#signing-in-with-a-provider)
  continueWith: (provider: string) => string;
  idpFailedTitle: string;
  idpFailed: (provider: string) => string;
  idpReason: string;
  idpBackToSignIn: string;
  idpUnusable: string;
  /** A linked user who is deactivated (told only after the provider, never at the password step). */
  idpUserInactive: string;
  /** A linked user an administrator locked; a lockout with an end says `locked`. */
  idpUserLocked: string;
  idpNoAccountTitle: string;
  idpNoAccount: (provider: string) => string;
  idpNothingOffered: string;
  idpLinkExisting: string;
  idpLinkTitle: string;
  idpLinkIntro: (provider: string) => string;
  idpLinkAndSignIn: string;
  idpCreateTitle: string;
  idpCreateIntro: (provider: string) => string;
  idpUserName: string;
  idpUserNameTaken: string;
  idpInvalidEmail: string;
  idpLinkNeedsOtp: string;
  idpSigningIn: string;
}

const en: Messages = {
  ...PAGE_TEXTS.en,
  required: 'Fill in this field.',
  tooLong: 'This is too long.',
  fixFields: 'Please correct the marked fields.',
  loginTitle: 'Sign in',
  loginIntro: 'Enter your login name to continue.',
  loginName: 'Login name',
  loginNameHint: 'Your user name, or user name@organization domain.',
  next: 'Next',
  createAccount: 'Create an account',
  chooseSignedIn: 'Choose a signed-in account',
  passwordTitle: 'Enter your password',
  signingInAs: 'Signing in as',
  useAnotherAccount: 'Use another account',
  password: 'Password',
  signIn: 'Sign in',
  invalidCredentials: 'The login name or password is incorrect.',
  locked: (minutes) => `Too many failed sign-in attempts: this account is locked. Try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`,
  throttled: (seconds) => `Too many failed sign-in attempts from your network. Please wait ${seconds} ${seconds === 1 ? 'second' : 'seconds'} and try again.`,
  otpTitle: 'Enter your one-time code',
  otpIntro: 'Open your authenticator app and enter the 6-digit code it shows for this account.',
  otpCode: 'One-time code',
  invalidOtp: 'The code is incorrect or has expired.',
  otpJustUsed: 'This code was just used. Wait for the next code.',
  passkeySignIn: 'Sign in with a passkey',
  passkeyTitle: 'Use your passkey',
  passkeyIntro: 'Sign in with the passkey saved on this device or on your security key.',
  usePassword: 'Use password instead',
  passkeyRefused: 'Signing in with a passkey did not work. Try again, or sign in another way.',
  passkeysTitle: 'Your passkeys',
  passkeysIntro: "Passkeys let you sign in without a password, with your device's screen lock or a security key.",
  passkeysSignedInAs: 'Signed in as',
  passkeysNone: 'You have no passkeys yet.',
  passkeysChooseAccount: 'Choose the account whose passkeys you want to manage.',
  passkeysOtherAccount: 'Choose another account',
  passkeyName: 'Name of the new passkey',
  passkeyNameHint: 'For example the device or key it is on.',
  passkeyCreated: 'Created',
  passkeyLastUsed: 'Last used',
  passkeyNeverUsed: 'never',
  passkeyAdd: 'Add a passkey',
  passkeyRemove: 'Remove passkey',
  passkeyAddFailed: 'The passkey could not be added. Please try again.',
  passkeyLastMethod: 'This passkey is your only way to sign in. Add another passkey before removing it.',
  passkeysReauth: 'To add or remove passkeys, sign in again: your last sign-in was more than 10 minutes ago.',
  signInAgain: 'Sign in again',
  passkeyAddedNotice: 'Your passkey has been added. From now on you can sign in with it.',
  passkeyRemovedNotice: 'The passkey has been removed. It no longer signs you in.',
  passkeyRemoveTitle: 'Remove this passkey?',
  passkeyRemoveText: (name) => `Once “${name}” is removed, it no longer signs you in. You can add a new passkey at any time.`,
  passkeyRemoveConfirm: 'Remove',
  passkeysDone: 'Done',
  passkeysDoneTitle: 'All done',
  passkeysDoneText: 'Your passkeys are saved. You can close this window now.',
  passkeyLinkIntro: 'This link lets you add a passkey to your account. Give it a name, then follow your browser.',
  passkeyLinkFailed: 'The passkey could not be added. If this keeps happening, the link may have expired or been used already: ask for a new one.',
  passkeyLinkDone: 'Your passkey has been added. From now on you can sign in with it.',
  passkeyLinkAccount: 'Account',
  accountsTitle: 'Choose an account',
  accountsIntro: 'Continue as one of the accounts signed in on this device, or use another one.',
  sessionGone: 'That account is no longer signed in. Please choose again.',
  registerTitle: 'Create an account',
  userName: 'User name',
  userNameHint: 'Letters, digits and . _ - @ +, at most 100 characters.',
  userNameInvalid: 'Use only letters, digits and . _ - @ +, at most 100 characters.',
  userNameTaken: 'This user name is taken. Please choose another one.',
  email: 'Email',
  emailInvalid: 'Enter a valid email address.',
  givenName: 'Given name',
  familyName: 'Family name',
  passwordConfirmation: 'Confirm password',
  policyIntro: 'The password must contain:',
  policy: {
    length: 'at least 8 characters',
    upper: 'an uppercase letter',
    lower: 'a lowercase letter',
    digit: 'a digit',
    symbol: 'a symbol, for example ! ? # -',
  },
  policyUnmet: (missing) => `The password does not meet the policy. It still needs: ${missing.join('; ')}.`,
  passwordMismatch: 'The passwords do not match.',
  haveAccount: 'I already have an account',
  forgotPassword: 'Forgot your password?',
  resetTitle: 'Reset your password',
  resetIntro: 'We will send a link to set a new password to the verified email address of this account.',
  resetSend: 'Send the link',
  resetSentTitle: 'Check your email',
  resetSentText: 'If this account has a verified email address, a link to set a new password is on its way there. The link is valid for one hour. If no mail arrives within a few minutes, check your spam folder or ask again later.',
  backToSignIn: 'Back to sign-in',
  setPasswordTitle: 'Set a new password',
  setPasswordIntro: 'Choose a new password for your account. Afterwards you are signed out everywhere, and you sign in with the new password.',
  newPassword: 'New password',
  setPasswordSubmit: 'Set the new password',
  resetLinkInvalid: 'This link is not valid: it may have been used already or replaced by a newer one. Ask for a new link with "Forgot your password?" when you sign in.',
  resetLinkExpired: 'This link has expired. Ask for a new link with "Forgot your password?" when you sign in.',
  passwordChangedTitle: 'Password changed',
  passwordChangedText: 'Your password has been changed and you have been signed out everywhere. Sign in with your new password in the application you use. You can close this window now.',
  passwordChangedNotice: 'Your password has been changed. Sign in with your new password.',
  loggedOutTitle: 'You are signed out',
  loggedOutText: 'You have been signed out. You can close this window now.',
  logoutTitle: 'Sign out?',
  logoutText: 'An application asks to sign you out of Gatehouse. This ends every account signed in on this device.',
  logoutButton: 'Sign out',
  logoutCancel: 'Cancel',
  logoutCancelledTitle: 'You are still signed in',
  logoutCancelledText: 'Nothing has changed: you are still signed in. You can close this window now.',
  logoutNoSession: 'No account is signed in on this device.',
  logoutContinue: 'Continue to the application',
  verifyEmailTitle: 'Verify your email address',
  verifyEmailIntro: 'Enter the verification code from the email we sent you.',
  verifyEmailUserId: 'User ID',
  verifyEmailCode: 'Verification code',
  verifyEmailSubmit: 'Verify',
  verifyEmailInvalid: 'The code is incorrect or no longer valid. Check the code, or request a new one.',
  verifyEmailExpired: 'The code has expired. Please request a new one.',
  emailVerifiedTitle: 'Email address verified',
  emailVerifiedText: 'Your email address is verified. You can close this window now.',
  requestExpired: 'This sign-in request is unknown or has expired, or your browser does not send cookies. Return to the application and sign in again.',
  csrfFailed: 'The form has expired or was sent from another site. Go back, reload the page and try again.',
  registrationUnavailable: 'Creating an account is not available here. Sign in with an existing account.',
  registrationLimited: (minutes) => `Too many accounts have been created recently. Please try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`,
  noPasswordTitle: 'Sign in with a passkey',
  noPasswordPasskeys: 'This organization signs in with passkeys, not with passwords. If your account has no passkey yet, ask your administrator for a link to set one up.',
  noSignInMethodTitle: 'Sign-in unavailable',
  noSignInMethod: 'This organization allows neither passwords nor passkeys here. Please contact your administrator.',
  resetUnavailable: 'This organization does not offer resetting a password here. Please contact your administrator.',
  continue: 'Continue',
  mfaSetupTitle: 'Set up a second factor',
  mfaSetupIntro: 'Besides your password, this organization asks for a second factor at every sign-in. Set one up now to continue.',
  mfaSetupAppTitle: 'Authenticator app',
  mfaSetupAppIntro: 'Scan the QR code with your authenticator app, or enter the key by hand, then enter the 6-digit code the app shows.',
  mfaSetupQrAlt: 'QR code for your authenticator app',
  mfaSetupSecret: 'Key',
  mfaSetupVerify: 'Verify and continue',
  mfaSetupPasskeyTitle: 'Passkey',
  mfaSetupPasskeyIntro: 'Or set up a passkey: on this device, on your phone or on a security key.',
  mfaSetupPasskeyButton: 'Set up a passkey',
  continueWith: (provider) => `Continue with ${provider}`,
  idpFailedTitle: 'Sign-in failed',
  idpFailed: (provider) => `Signing in with ${provider} did not succeed.`,
  idpReason: 'Reason',
  idpBackToSignIn: 'Back to sign-in',
  idpUnusable: 'This sign-in with an external account cannot be used here. Please start again.',
  idpUserInactive: 'This account is deactivated. Please contact your administrator.',
  idpUserLocked: 'This account is locked. Please contact your administrator.',
  idpNoAccountTitle: 'No account linked',
  idpNoAccount: (provider) => `No account is linked to this ${provider} account.`,
  idpNothingOffered: 'Please ask your administrator to link your account.',
  idpLinkExisting: 'Link an existing account',
  idpLinkTitle: 'Link your account',
  idpLinkIntro: (provider) => `Sign in with your existing account to link it to your ${provider} account.`,
  idpLinkAndSignIn: 'Link and sign in',
  idpCreateTitle: 'Create an account',
  idpCreateIntro: (provider) => `Your new account will be linked to your ${provider} account, and you sign in with it.`,
  idpUserName: 'User name',
  idpUserNameTaken: 'This user name is taken. Please choose another one.',
  idpInvalidEmail: 'Enter an email address like alice@example.com.',
  idpSigningIn: 'Signing you in',
  idpLinkNeedsOtp: 'This account also signs in with a code from an authenticator app, so its password alone cannot link it. Please sign in with your login name instead.',
};

const de: Messages = {
  ...PAGE_TEXTS.de,
  required: 'Bitte füllen Sie dieses Feld aus.',
  tooLong: 'Die Eingabe ist zu lang.',
  fixFields: 'Bitte korrigieren Sie die markierten Felder.',
  loginTitle: 'Anmelden',
  loginIntro: 'Geben Sie Ihren Anmeldenamen ein, um fortzufahren.',
  loginName: 'Anmeldename',
  loginNameHint: 'Ihr Benutzername oder Benutzername@Organisationsdomäne.',
  next: 'Weiter',
  createAccount: 'Konto erstellen',
  chooseSignedIn: 'Ein angemeldetes Konto wählen',
  passwordTitle: 'Passwort eingeben',
  signingInAs: 'Anmeldung als',
  useAnotherAccount: 'Anderes Konto verwenden',
  password: 'Passwort',
  signIn: 'Anmelden',
  invalidCredentials: 'Anmeldename oder Passwort ist falsch.',
  locked: (minutes) => `Zu viele fehlgeschlagene Anmeldeversuche: Dieses Konto ist gesperrt. Versuchen Sie es in ${minutes} ${minutes === 1 ? 'Minute' : 'Minuten'} erneut.`,
  throttled: (seconds) => `Zu viele fehlgeschlagene Anmeldeversuche aus Ihrem Netzwerk. Bitte warten Sie ${seconds} ${seconds === 1 ? 'Sekunde' : 'Sekunden'} und versuchen Sie es dann erneut.`,
  otpTitle: 'Einmalcode eingeben',
  otpIntro: 'Öffnen Sie Ihre Authenticator-App und geben Sie den 6-stelligen Code ein, den sie für dieses Konto anzeigt.',
  otpCode: 'Einmalcode',
  invalidOtp: 'Der Code ist falsch oder abgelaufen.',
  otpJustUsed: 'Dieser Code wurde gerade verwendet. Warten Sie auf den nächsten Code.',
  passkeySignIn: 'Mit Passkey anmelden',
  passkeyTitle: 'Passkey verwenden',
  passkeyIntro: 'Melden Sie sich mit dem Passkey auf diesem Gerät oder auf Ihrem Sicherheitsschlüssel an.',
  usePassword: 'Stattdessen Passwort verwenden',
  passkeyRefused: 'Die Anmeldung mit dem Passkey hat nicht geklappt. Versuchen Sie es erneut oder melden Sie sich anders an.',
  passkeysTitle: 'Ihre Passkeys',
  passkeysIntro: 'Mit Passkeys melden Sie sich ohne Passwort an, mit der Displaysperre Ihres Geräts oder einem Sicherheitsschlüssel.',
  passkeysSignedInAs: 'Angemeldet als',
  passkeysNone: 'Sie haben noch keine Passkeys.',
  passkeysChooseAccount: 'Wählen Sie das Konto, dessen Passkeys Sie verwalten möchten.',
  passkeysOtherAccount: 'Anderes Konto wählen',
  passkeyName: 'Name des neuen Passkeys',
  passkeyNameHint: 'Zum Beispiel das Gerät oder der Schlüssel, auf dem er liegt.',
  passkeyCreated: 'Erstellt',
  passkeyLastUsed: 'Zuletzt verwendet',
  passkeyNeverUsed: 'nie',
  passkeyAdd: 'Passkey hinzufügen',
  passkeyRemove: 'Passkey entfernen',
  passkeyAddFailed: 'Der Passkey konnte nicht hinzugefügt werden. Bitte versuchen Sie es erneut.',
  passkeyLastMethod: 'Dieser Passkey ist Ihre einzige Anmeldemöglichkeit. Fügen Sie einen weiteren hinzu, bevor Sie ihn entfernen.',
  passkeysReauth: 'Um Passkeys hinzuzufügen oder zu entfernen, melden Sie sich erneut an: Ihre letzte Anmeldung ist mehr als 10 Minuten her.',
  signInAgain: 'Erneut anmelden',
  passkeyAddedNotice: 'Ihr Passkey wurde hinzugefügt. Ab jetzt können Sie sich damit anmelden.',
  passkeyRemovedNotice: 'Der Passkey wurde entfernt. Mit ihm können Sie sich nicht mehr anmelden.',
  passkeyRemoveTitle: 'Diesen Passkey entfernen?',
  passkeyRemoveText: (name) => `Sobald „${name}“ entfernt ist, können Sie sich damit nicht mehr anmelden. Sie können jederzeit einen neuen Passkey hinzufügen.`,
  passkeyRemoveConfirm: 'Entfernen',
  passkeysDone: 'Fertig',
  passkeysDoneTitle: 'Alles erledigt',
  passkeysDoneText: 'Ihre Passkeys sind gespeichert. Sie können dieses Fenster jetzt schließen.',
  passkeyLinkIntro: 'Mit diesem Link fügen Sie Ihrem Konto einen Passkey hinzu. Geben Sie ihm einen Namen und folgen Sie dann Ihrem Browser.',
  passkeyLinkFailed: 'Der Passkey konnte nicht hinzugefügt werden. Wenn das wieder passiert, ist der Link vielleicht abgelaufen oder wurde schon verwendet: Fordern Sie einen neuen an.',
  passkeyLinkDone: 'Ihr Passkey wurde hinzugefügt. Ab jetzt können Sie sich damit anmelden.',
  passkeyLinkAccount: 'Konto',
  accountsTitle: 'Konto auswählen',
  accountsIntro: 'Fahren Sie mit einem auf diesem Gerät angemeldeten Konto fort oder verwenden Sie ein anderes.',
  sessionGone: 'Dieses Konto ist nicht mehr angemeldet. Bitte wählen Sie erneut.',
  registerTitle: 'Konto erstellen',
  userName: 'Benutzername',
  userNameHint: 'Buchstaben, Ziffern und . _ - @ +, höchstens 100 Zeichen.',
  userNameInvalid: 'Bitte nur Buchstaben, Ziffern und . _ - @ + verwenden, höchstens 100 Zeichen.',
  userNameTaken: 'Dieser Benutzername ist bereits vergeben. Bitte wählen Sie einen anderen.',
  email: 'E-Mail',
  emailInvalid: 'Geben Sie eine gültige E-Mail-Adresse ein.',
  givenName: 'Vorname',
  familyName: 'Nachname',
  passwordConfirmation: 'Passwort bestätigen',
  policyIntro: 'Das Passwort muss enthalten:',
  policy: {
    length: 'mindestens 8 Zeichen',
    upper: 'einen Großbuchstaben',
    lower: 'einen Kleinbuchstaben',
    digit: 'eine Ziffer',
    symbol: 'ein Sonderzeichen, zum Beispiel ! ? # -',
  },
  policyUnmet: (missing) => `Das Passwort erfüllt die Richtlinie nicht. Es muss noch enthalten: ${missing.join('; ')}.`,
  passwordMismatch: 'Die Passwörter stimmen nicht überein.',
  haveAccount: 'Ich habe bereits ein Konto',
  forgotPassword: 'Passwort vergessen?',
  resetTitle: 'Passwort zurücksetzen',
  resetIntro: 'Wir senden einen Link zum Setzen eines neuen Passworts an die bestätigte E-Mail-Adresse dieses Kontos.',
  resetSend: 'Link senden',
  resetSentTitle: 'Sehen Sie in Ihr Postfach',
  resetSentText: 'Wenn dieses Konto eine bestätigte E-Mail-Adresse hat, ist ein Link zum Setzen eines neuen Passworts dorthin unterwegs. Der Link ist eine Stunde lang gültig. Wenn in einigen Minuten keine E-Mail ankommt, sehen Sie im Spam-Ordner nach oder fragen Sie später erneut an.',
  backToSignIn: 'Zurück zur Anmeldung',
  setPasswordTitle: 'Neues Passwort setzen',
  setPasswordIntro: 'Wählen Sie ein neues Passwort für Ihr Konto. Danach sind Sie überall abgemeldet und melden sich mit dem neuen Passwort an.',
  newPassword: 'Neues Passwort',
  setPasswordSubmit: 'Neues Passwort setzen',
  resetLinkInvalid: 'Dieser Link ist nicht gültig: Er wurde vielleicht schon verwendet oder durch einen neueren ersetzt. Fordern Sie bei der Anmeldung mit „Passwort vergessen?“ einen neuen Link an.',
  resetLinkExpired: 'Dieser Link ist abgelaufen. Fordern Sie bei der Anmeldung mit „Passwort vergessen?“ einen neuen Link an.',
  passwordChangedTitle: 'Passwort geändert',
  passwordChangedText: 'Ihr Passwort wurde geändert, und Sie wurden überall abgemeldet. Melden Sie sich in Ihrer Anwendung mit dem neuen Passwort an. Sie können dieses Fenster jetzt schließen.',
  passwordChangedNotice: 'Ihr Passwort wurde geändert. Melden Sie sich mit dem neuen Passwort an.',
  loggedOutTitle: 'Sie sind abgemeldet',
  loggedOutText: 'Sie wurden abgemeldet. Sie können dieses Fenster jetzt schließen.',
  logoutTitle: 'Abmelden?',
  logoutText: 'Eine Anwendung möchte Sie von Gatehouse abmelden. Damit enden alle Anmeldungen auf diesem Gerät.',
  logoutButton: 'Abmelden',
  logoutCancel: 'Abbrechen',
  logoutCancelledTitle: 'Sie sind weiterhin angemeldet',
  logoutCancelledText: 'Es hat sich nichts geändert: Sie sind weiterhin angemeldet. Sie können dieses Fenster jetzt schließen.',
  logoutNoSession: 'Auf diesem Gerät ist kein Konto angemeldet.',
  logoutContinue: 'Weiter zur Anwendung',
  verifyEmailTitle: 'E-Mail-Adresse bestätigen',
  verifyEmailIntro: 'Geben Sie den Bestätigungscode aus der E-Mail ein, die wir Ihnen gesendet haben.',
  verifyEmailUserId: 'Benutzer-ID',
  verifyEmailCode: 'Bestätigungscode',
  verifyEmailSubmit: 'Bestätigen',
  verifyEmailInvalid: 'Der Code ist falsch oder nicht mehr gültig. Prüfen Sie den Code oder fordern Sie einen neuen an.',
  verifyEmailExpired: 'Der Code ist abgelaufen. Bitte fordern Sie einen neuen an.',
  emailVerifiedTitle: 'E-Mail-Adresse bestätigt',
  emailVerifiedText: 'Ihre E-Mail-Adresse ist bestätigt. Sie können dieses Fenster jetzt schließen.',
  requestExpired: 'Diese Anmeldeanfrage ist unbekannt oder abgelaufen, oder Ihr Browser sendet keine Cookies. Kehren Sie zur Anwendung zurück und melden Sie sich erneut an.',
  csrfFailed: 'Das Formular ist abgelaufen oder wurde von einer anderen Website gesendet. Gehen Sie zurück, laden Sie die Seite neu und versuchen Sie es erneut.',
  registrationUnavailable: 'Hier kann kein Konto erstellt werden. Melden Sie sich mit einem bestehenden Konto an.',
  registrationLimited: (minutes) => `In letzter Zeit wurden zu viele Konten erstellt. Bitte versuchen Sie es in ${minutes} ${minutes === 1 ? 'Minute' : 'Minuten'} erneut.`,
  noPasswordTitle: 'Mit einem Passkey anmelden',
  noPasswordPasskeys: 'Diese Organisation meldet sich mit Passkeys an, nicht mit Passwörtern. Hat Ihr Konto noch keinen Passkey, bitten Sie Ihre Administration um einen Link, um einen einzurichten.',
  noSignInMethodTitle: 'Anmeldung nicht möglich',
  noSignInMethod: 'Diese Organisation erlaubt hier weder Passwörter noch Passkeys. Bitte wenden Sie sich an Ihre Administration.',
  resetUnavailable: 'Diese Organisation bietet hier kein Zurücksetzen des Passworts an. Bitte wenden Sie sich an Ihre Administration.',
  continue: 'Weiter',
  mfaSetupTitle: 'Zweiten Faktor einrichten',
  mfaSetupIntro: 'Diese Organisation verlangt bei jeder Anmeldung neben dem Passwort einen zweiten Faktor. Richten Sie jetzt einen ein, um fortzufahren.',
  mfaSetupAppTitle: 'Authenticator-App',
  mfaSetupAppIntro: 'Scannen Sie den QR-Code mit Ihrer Authenticator-App oder geben Sie den Schlüssel von Hand ein, und geben Sie dann den 6-stelligen Code ein, den die App anzeigt.',
  mfaSetupQrAlt: 'QR-Code für Ihre Authenticator-App',
  mfaSetupSecret: 'Schlüssel',
  mfaSetupVerify: 'Bestätigen und fortfahren',
  mfaSetupPasskeyTitle: 'Passkey',
  mfaSetupPasskeyIntro: 'Oder richten Sie einen Passkey ein: auf diesem Gerät, auf Ihrem Telefon oder auf einem Sicherheitsschlüssel.',
  mfaSetupPasskeyButton: 'Passkey einrichten',
  continueWith: (provider) => `Weiter mit ${provider}`,
  idpFailedTitle: 'Anmeldung fehlgeschlagen',
  idpFailed: (provider) => `Die Anmeldung mit ${provider} ist nicht gelungen.`,
  idpReason: 'Grund',
  idpBackToSignIn: 'Zurück zur Anmeldung',
  idpUnusable: 'Diese Anmeldung mit einem externen Konto kann hier nicht verwendet werden. Bitte beginnen Sie von vorn.',
  idpUserInactive: 'Dieses Konto ist deaktiviert. Bitte wenden Sie sich an Ihre Administration.',
  idpUserLocked: 'Dieses Konto ist gesperrt. Bitte wenden Sie sich an Ihre Administration.',
  idpNoAccountTitle: 'Kein Konto verknüpft',
  idpNoAccount: (provider) => `Mit diesem ${provider}-Konto ist kein Konto verknüpft.`,
  idpNothingOffered: 'Bitte bitten Sie Ihre Administration, Ihr Konto zu verknüpfen.',
  idpLinkExisting: 'Bestehendes Konto verknüpfen',
  idpLinkTitle: 'Konto verknüpfen',
  idpLinkIntro: (provider) => `Melden Sie sich mit Ihrem bestehenden Konto an, um es mit Ihrem ${provider}-Konto zu verknüpfen.`,
  idpLinkAndSignIn: 'Verknüpfen und anmelden',
  idpCreateTitle: 'Konto erstellen',
  idpCreateIntro: (provider) => `Ihr neues Konto wird mit Ihrem ${provider}-Konto verknüpft, und Sie melden sich damit an.`,
  idpUserName: 'Benutzername',
  idpUserNameTaken: 'Dieser Benutzername ist vergeben. Bitte wählen Sie einen anderen.',
  idpInvalidEmail: 'Geben Sie eine E-Mail-Adresse wie alice@example.com ein.',
  idpSigningIn: 'Sie werden angemeldet',
  idpLinkNeedsOtp: 'Dieses Konto meldet sich zusätzlich mit einem Code aus einer Authenticator-App an; das Passwort allein kann es daher nicht verknüpfen. Bitte melden Sie sich stattdessen mit Ihrem Anmeldenamen an.',
};

const MESSAGES: Record<Locale, Messages> = { en, de };

export function messagesFor(locale: Locale): Messages {
  return MESSAGES[locale];
}

/** Pages not bound to a sign-in: the language of `ui_locales` among the parameters, then Accept-Language. */
export function messagesForParams(params: ReadonlyMap<string, string>, acceptLanguage: string | undefined): Messages {
  const locales = (params.get('ui_locales') ?? '').split(' ').filter(Boolean).slice(0, 10);
  return messagesFor(negotiateLocale(locales, acceptLanguage));
}

