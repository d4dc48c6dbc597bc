// The JSON the fake Twilio (fake-twilio.ts) answers for each resource the A2P check reads, field
// for field as Twilio writes it, from the few facts a test sets (`FakeTwilioData`).

/** A Twilio-shaped SID: two letters and 32 hex digits, e.g. twilioSid('MG', 1). */
export function twilioSid(prefix: string, n: number): string {
  return prefix + n.toString(16).padStart(32, '0');
}

export interface FakeIncomingNumber {
  sid: string;
  phoneNumber: string;
}

export interface FakeMessagingService {
  sid: string;
  /** PN sids of the account's incoming numbers that are in this service. */
  numberSids: string[];
}

export interface FakeCampaign {
  sid: string;
  serviceSid: string;
  brandSid: string;
  /** `campaign_status`: VERIFIED, PENDING, IN_PROGRESS, FAILED, ... */
  status: string;
  mock?: boolean;
}

export interface FakeBrand {
  sid: string;
  /** `status`: APPROVED, PENDING, IN_REVIEW, FAILED, DELETED. */
  status: string;
  mock?: boolean;
}

export interface FakeTwilioData {
  incomingNumbers: FakeIncomingNumber[];
  services: FakeMessagingService[];
  campaigns: FakeCampaign[];
  brands: FakeBrand[];
}

/** Whose account the fake serves and where: what the resources' own fields and links name. */
export interface FakeTwilioAccount {
  accountSid: string;
  baseUrl: string;
}

const CREATED_RFC2822 = 'Thu, 30 Jul 2015 20:12:31 +0000';
const CREATED_ISO = '2015-07-30T20:12:31Z';

export function incomingNumberJson({ accountSid }: FakeTwilioAccount, number: FakeIncomingNumber) {
  return {
    account_sid: accountSid,
    address_requirements: 'none',
    address_sid: null,
    api_version: '2010-04-01',
    beta: false,
    bundle_sid: null,
    capabilities: { fax: false, mms: true, sms: true, voice: true },
    date_created: CREATED_RFC2822,
    date_updated: CREATED_RFC2822,
    emergency_address_sid: null,
    emergency_address_status: 'unregistered',
    emergency_status: 'Active',
    friendly_name: number.phoneNumber,
    identity_sid: null,
    origin: 'twilio',
    phone_number: number.phoneNumber,
    sid: number.sid,
    sms_application_sid: '',
    sms_fallback_method: 'POST',
    sms_fallback_url: '',
    sms_method: 'POST',
    sms_url: '',
    status: 'in-use',
    status_callback: '',
    status_callback_method: 'POST',
    subresource_uris: {
      assigned_add_ons: `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/${number.sid}/AssignedAddOns.json`,
    },
    trunk_sid: null,
    uri: `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/${number.sid}.json`,
    voice_application_sid: null,
    voice_caller_id_lookup: false,
    voice_fallback_method: 'POST',
    voice_fallback_url: null,
    voice_method: 'POST',
    voice_receive_mode: 'voice',
    voice_url: null,
  };
}

export function serviceJson(
  { accountSid, baseUrl }: FakeTwilioAccount,
  service: FakeMessagingService,
  campaigns: readonly FakeCampaign[],
) {
  const url = `${baseUrl}/v1/Services/${service.sid}`;
  return {
    account_sid: accountSid,
    area_code_geomatch: true,
    date_created: CREATED_ISO,
    date_updated: CREATED_ISO,
    fallback_method: 'POST',
    fallback_to_long_code: true,
    fallback_url: null,
    friendly_name: `Service ${service.sid.slice(-4)}`,
    inbound_method: 'POST',
    inbound_request_url: null,
    mms_converter: true,
    scan_message_content: 'inherit',
    sid: service.sid,
    smart_encoding: true,
    status_callback: null,
    sticky_sender: true,
    synchronous_validation: true,
    url,
    us_app_to_person_registered: campaigns.some((c) => c.serviceSid === service.sid),
    use_inbound_webhook_on_number: false,
    usecase: 'marketing',
    validity_period: 14400,
    links: {
      alpha_senders: `${url}/AlphaSenders`,
      channel_senders: `${url}/ChannelSenders`,
      phone_numbers: `${url}/PhoneNumbers`,
      short_codes: `${url}/ShortCodes`,
      us_app_to_person: `${url}/Compliance/Usa2p`,
      us_app_to_person_usecases: `${url}/Compliance/Usa2p/Usecases`,
    },
  };
}

export function serviceNumberJson(
  { accountSid, baseUrl }: FakeTwilioAccount,
  serviceSid: string,
  number: FakeIncomingNumber,
) {
  return {
    account_sid: accountSid,
    capabilities: ['SMS', 'MMS', 'Voice'],
    country_code: 'US',
    date_created: CREATED_ISO,
    date_updated: CREATED_ISO,
    phone_number: number.phoneNumber,
    service_sid: serviceSid,
    sid: number.sid,
    url: `${baseUrl}/v1/Services/${serviceSid}/PhoneNumbers/${number.sid}`,
  };
}

export function campaignJson({ accountSid, baseUrl }: FakeTwilioAccount, campaign: FakeCampaign) {
  return {
    account_sid: accountSid,
    age_gated: false,
    brand_registration_sid: campaign.brandSid,
    campaign_id: `C${campaign.sid.slice(-6).toUpperCase()}`,
    campaign_status: campaign.status,
    date_created: CREATED_ISO,
    date_updated: CREATED_ISO,
    description: 'Send marketing messages about sales and offers to opted-in customers.',
    direct_lending: false,
    errors: [],
    has_embedded_links: true,
    has_embedded_phone: false,
    help_keywords: ['HELP'],
    help_message: 'Reply STOP to unsubscribe. Msg&Data Rates May Apply.',
    is_externally_registered: false,
    message_flow: 'End users opt in by visiting www.example.com and adding their phone number.',
    message_samples: ['EXPRESS: Denim Days Event is ON', 'LAST CHANCE: Denim Days ends today'],
    messaging_service_sid: campaign.serviceSid,
    mock: campaign.mock ?? false,
    opt_in_keywords: ['START'],
    opt_in_message: 'Acme Corporation: You are now opted-in. Reply HELP for help, STOP to stop.',
    opt_out_keywords: ['STOP'],
    opt_out_message:
      'You have successfully been unsubscribed. You will not receive any more messages.',
    rate_limits: { att: { mps: 600, msg_class: 'A' }, tmobile: { brand_tier: 'TOP' } },
    sid: campaign.sid,
    subscriber_opt_in: true,
    url: `${baseUrl}/v1/Services/${campaign.serviceSid}/Compliance/Usa2p/${campaign.sid}`,
    us_app_to_person_usecase: 'MARKETING',
  };
}

export function brandJson({ accountSid, baseUrl }: FakeTwilioAccount, brand: FakeBrand) {
  return {
    a2p_profile_bundle_sid: twilioSid('BU', 2),
    account_sid: accountSid,
    brand_feedback: null,
    brand_score: 42,
    brand_type: 'STANDARD',
    customer_profile_bundle_sid: twilioSid('BU', 1),
    date_created: CREATED_ISO,
    date_updated: CREATED_ISO,
    errors: [],
    failure_reason: null,
    government_entity: false,
    identity_status: 'VERIFIED',
    links: {
      brand_registration_otps: `${baseUrl}/v1/a2p/BrandRegistrations/${brand.sid}/SmsOtp`,
      brand_vettings: `${baseUrl}/v1/a2p/BrandRegistrations/${brand.sid}/Vettings`,
    },
    mock: brand.mock ?? false,
    russell_3000: false,
    sid: brand.sid,
    skip_automatic_sec_vet: false,
    status: brand.status,
    tax_exempt_status: null,
    tcr_id: `B${brand.sid.slice(-6).toUpperCase()}`,
    url: `${baseUrl}/v1/a2p/BrandRegistrations/${brand.sid}`,
  };
}
