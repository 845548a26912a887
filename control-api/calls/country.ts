/** Moved to core (media-app checks outbound tel destinations too): see core/calls/country.ts. */
export { countryOf } from '../../core/calls/country';
