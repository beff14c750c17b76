export * from './app-event.js';
export * from './card.events.js';
export * from './comment.events.js';
export * from './workspace.events.js';
export * from './event-bus.js';
export * from './on-app-event.decorator.js';
