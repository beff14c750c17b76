import { ConflictError, ForbiddenError, NotFoundError } from '../../../shared/domain/domain-error.js';

export class OrganizationNotFoundError extends NotFoundError {
  constructor() {
    super('Organization', 'WORKSPACE.ORGANIZATION_NOT_FOUND');
  }
}

export class ProjectNotFoundError extends NotFoundError {
  constructor() {
    super('Project', 'WORKSPACE.PROJECT_NOT_FOUND');
  }
}

export class MemberNotFoundError extends NotFoundError {
  constructor() {
    super('Member', 'WORKSPACE.MEMBER_NOT_FOUND');
  }
}

export class RoleTooWeakError extends ForbiddenError {
  constructor(needed: string) {
    super(`Your role in this team does not allow this (${needed} access needed)`);
  }
}

export class AlreadyMemberError extends ConflictError {
  constructor() {
    super('The user is already a member of this team', 'WORKSPACE.ALREADY_MEMBER');
  }
}

export class LastAdminError extends ConflictError {
  constructor() {
    super('A team keeps at least one admin', 'WORKSPACE.LAST_ADMIN');
  }
}
