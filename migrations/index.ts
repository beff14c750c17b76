import { IdentityInit1763769600000 } from './1763769600000-identity-init.js';
import { WorkspaceInit1763769600100 } from './1763769600100-workspace-init.js';
import { CardsInit1763769600200 } from './1763769600200-cards-init.js';
import { FieldsInit1763769600300 } from './1763769600300-fields-init.js';
import { GroupingInit1763769600400 } from './1763769600400-grouping-init.js';
import { CardsTeamCardsIndex1763769600500 } from './1763769600500-cards-team-cards-index.js';
import { LinksOneOwnerBackfill1763800000000 } from './1763800000000-links-one-owner-backfill.js';
import { CardsCountersDropTopLevelCard1763800000100 } from './1763800000100-cards-counters-drop-top-level-card.js';
import { GroupingDropGroupTypeAttribute1763800000200 } from './1763800000200-grouping-drop-group-type-attribute.js';
import { IdentityRateLimits1763810000000 } from './1763810000000-identity-rate-limits.js';
import { FilterIndexes1763840000100 } from './1763840000100-filter-indexes.js';
import { ImporterUploads1763850000000 } from './1763850000000-importer-uploads.js';
import { IdentityOAuth1763820000000 } from './1763820000000-identity-oauth.js';
import { WebSessions1763820000100 } from './1763820000100-web-sessions.js';
import { GroupingGroupsTitleIndex1795564859316 } from './1795564859316-grouping-groups-title-index.js';
import { FieldsScalarValuesKindStats1795564940517 } from './1795564940517-fields-scalar-values-kind-stats.js';
import { CardsTitleHashIndex1795565745706 } from './1795565745706-cards-title-hash-index.js';
import { FieldsScalarValuesDayIndex1795565975766 } from './1795565975766-fields-scalar-values-day-index.js';
import { FieldsFilterCoveringIndexes1795600000000 } from './1795600000000-fields-filter-covering-indexes.js';
import { GroupingMembershipsGroupCardIndex1795600000100 } from './1795600000100-grouping-memberships-group-card-index.js';
import { CardsUnlistedIndex1795610000000 } from './1795610000000-cards-unlisted-index.js';
import { CardsNextChildPosition1795620000000 } from './1795620000000-cards-next-child-position.js';
import { IdentityOAuthGrantRows1795630000000 } from './1795630000000-identity-oauth-grant-rows.js';
import { IdentityOAuthTokensGrantFk1795640000000 } from './1795640000000-identity-oauth-tokens-grant-fk.js';
import { IdentityOAuthTokensWithoutGrant1795640000100 } from './1795640000100-identity-oauth-tokens-without-grant.js';
import { IdentityOAuthTokensGrantFkValidate1795640000200 } from './1795640000200-identity-oauth-tokens-grant-fk-validate.js';
import { IdentityOAuthTokensLiveIndex1795640000300 } from './1795640000300-identity-oauth-tokens-live-index.js';
import { IdentityOAuthRotatedRefreshTokens1795650000000 } from './1795650000000-identity-oauth-rotated-refresh-tokens.js';
import { IdentityOAuthCodesUserIndex1795660000000 } from './1795660000000-identity-oauth-codes-user-index.js';
import { WebFormSubmissions1795670000000 } from './1795670000000-web-form-submissions.js';
import { IdentityOAuthRotatedRefreshExpiry1795680000000 } from './1795680000000-identity-oauth-rotated-refresh-expiry.js';
import { IdentityIdempotencyKeys1795690000000 } from './1795690000000-identity-idempotency-keys.js';
import { CardsTitleTrgmIndexAnySchema1795700000000 } from './1795700000000-cards-title-trgm-index-any-schema.js';

/** Every migration, in order. Listed explicitly so ESM builds, the CLI and tests load the same set. */
export const MIGRATIONS = [
  IdentityInit1763769600000,
  WorkspaceInit1763769600100,
  CardsInit1763769600200,
  FieldsInit1763769600300,
  GroupingInit1763769600400,
  CardsTeamCardsIndex1763769600500,
  LinksOneOwnerBackfill1763800000000,
  CardsCountersDropTopLevelCard1763800000100,
  GroupingDropGroupTypeAttribute1763800000200,
  IdentityRateLimits1763810000000,
  FilterIndexes1763840000100,
  ImporterUploads1763850000000,
  IdentityOAuth1763820000000,
  WebSessions1763820000100,
  GroupingGroupsTitleIndex1795564859316,
  FieldsScalarValuesKindStats1795564940517,
  CardsTitleHashIndex1795565745706,
  FieldsScalarValuesDayIndex1795565975766,
  FieldsFilterCoveringIndexes1795600000000,
  GroupingMembershipsGroupCardIndex1795600000100,
  CardsUnlistedIndex1795610000000,
  CardsNextChildPosition1795620000000,
  IdentityOAuthGrantRows1795630000000,
  IdentityOAuthTokensGrantFk1795640000000,
  IdentityOAuthTokensWithoutGrant1795640000100,
  IdentityOAuthTokensGrantFkValidate1795640000200,
  IdentityOAuthTokensLiveIndex1795640000300,
  IdentityOAuthRotatedRefreshTokens1795650000000,
  IdentityOAuthCodesUserIndex1795660000000,
  WebFormSubmissions1795670000000,
  IdentityOAuthRotatedRefreshExpiry1795680000000,
  IdentityIdempotencyKeys1795690000000,
  CardsTitleTrgmIndexAnySchema1795700000000,
];
